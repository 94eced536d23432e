"""What nova sends and reports, turned into this scheduler's shapes.

Nova 34 talks to a scheduler with three kinds of payload this module reads:

* its **wire form** of objects, ``{"nova_object.name": "Flavor",
  "nova_object.namespace": "nova", "nova_object.version": "1.2",
  "nova_object.data": {...}, "nova_object.changes": [...]}``, nested
  anywhere (a flavor in a legacy dict, a whole RequestSpec, a tracker's
  NUMA topology); ``unwrap`` turns it into plain dicts and lists (an
  ``...List`` object into the list of its ``objects``), which is also what
  nova's own ``obj_to_primitive`` produces;
* **fields the scheduler does not use** (a flavor's ``rxtx_factor``, a
  node's ``service_id``...): ``drop_ignored`` removes the ones nova is known
  to send and logs them at debug level, so that any other unknown field
  still fails as a typo;
* a tracker's ``numa_topology`` JSON, ``pci_device_pools`` and
  ``supported_hv_specs`` (``compute_node_stats``), read into the shapes the
  filters read: the NUMA topology of ``scheduler.filters.numa_cells``, flat
  PCI pools of string tags, and ``supported_instances`` triples.

A nova RequestSpec primitive is read by ``request_spec_fields``.
"""

import json

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

_NAME = 'nova_object.name'
_DATA = 'nova_object.data'


def is_envelope(value):
    return isinstance(value, dict) and _NAME in value and _DATA in value


def unwrap(value):
    """Plain dicts and lists for nova's wire form (see module doc)."""
    if is_envelope(value):
        data = value[_DATA]
        if str(value[_NAME]).endswith('List') and isinstance(data, dict) \
                and 'objects' in data:
            return [unwrap(item) for item in data['objects']]
        return unwrap(data)
    if isinstance(value, dict):
        return {key: unwrap(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [unwrap(item) for item in value]
    return value


def drop_ignored(values, ignored, path):
    """``values`` without the ``ignored`` keys, each logged at debug."""
    dropped = sorted(key for key in values if key in ignored)
    if dropped:
        LOG.debug('Ignoring %s in %s: the scheduler does not use them',
                  ', '.join(dropped), path)
    return {k: v for k, v in values.items() if k not in ignored}


# -- flavors, images, groups ------------------------------------------------

#: nova Flavor fields the scheduler does not read
FLAVOR_IGNORED = frozenset({
    'id', 'rxtx_factor', 'vcpu_weight', 'disabled', 'is_public',
    'description', 'projects', 'created_at', 'updated_at', 'deleted_at',
    'deleted'})

#: nova ImageMeta fields the scheduler does not read
IMAGE_IGNORED = frozenset({
    'status', 'visibility', 'protected', 'checksum', 'owner', 'size',
    'virtual_size', 'container_format', 'disk_format', 'created_at',
    'updated_at', 'tags', 'direct_url'})

#: nova Destination fields the scheduler does not read
DESTINATION_IGNORED = frozenset({
    'cell', 'aggregates', 'allow_cross_cell_move', 'forbidden_aggregates'})

#: nova InstanceGroup fields the scheduler does not read
GROUP_IGNORED = frozenset({
    'id', 'user_id', 'project_id', 'created_at', 'updated_at',
    'deleted_at', 'deleted', 'policies', '_policies', '_rules'})


def _known_fields(value, ignored, path):
    """``value`` (unwrapped) less the nova fields in ``ignored``; a value
    that is not a dict is returned as it is, for the caller to refuse."""
    if not isinstance(value, dict):
        return value
    return drop_ignored(value, ignored, path)


def flavor(value, path):
    return _known_fields(unwrap(value), FLAVOR_IGNORED, path)


def image(value, path):
    """An image dict of ImageMeta fields; property values as strings."""
    value = _known_fields(unwrap(value), IMAGE_IGNORED, path)
    props = value.get('properties') if isinstance(value, dict) else None
    if isinstance(props, dict):
        value['properties'] = {k: _prop_text(v) for k, v in props.items()}
    return value


def _prop_text(value):
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def destination(value, path):
    return _known_fields(unwrap(value), DESTINATION_IGNORED, path)


def instance_group(value, path):
    value = unwrap(value)
    if isinstance(value, dict) and not value.get('policy') and \
            value.get('policies'):
        # groups made before nova's InstanceGroup 1.11 carry a list
        value = dict(value, policy=list(value['policies'])[0])
    if isinstance(value, dict) and value.get('_rules') and \
            not value.get('rules'):
        # nova's InstanceGroup 1.11+ carries its rules as _rules
        value = dict(value, rules=value['_rules'])
    value = _known_fields(value, GROUP_IGNORED, path)
    if not isinstance(value, dict):
        return value
    if value.get('rules'):
        value['rules'] = {k: str(v) for k, v in value['rules'].items()}
    for key in ('members', 'hosts'):
        if value.get(key) is None:
            value.pop(key, None)
    return value


# -- a whole nova RequestSpec ---------------------------------------------

#: nova RequestSpec fields the scheduler does not read (the NUMA topology
#: and PCI requests are derived from the flavor here, as nova derives them)
REQUEST_SPEC_IGNORED = frozenset({
    'id', 'numa_topology', 'pci_requests', 'limits', 'security_groups',
    'network_metadata', 'requested_resources', 'request_level_params',
    'requested_networks'})


def _retry(value):
    # nova's SchedulerRetries holds ComputeNode objects, not pairs
    value = dict(value)
    hosts = []
    for node in value.get('hosts') or ():
        if isinstance(node, dict):
            node = [node.get('host'), node.get('hypervisor_hostname')]
        hosts.append([str(part) for part in node if part is not None])
    value['hosts'] = hosts
    return value


def request_spec_fields(primitive, path='spec_obj'):
    """RequestSpec field values from a nova RequestSpec primitive."""
    values = unwrap(primitive)
    values = drop_ignored(values, REQUEST_SPEC_IGNORED, path)
    uuid = values.pop('instance_uuid', None)
    if uuid is not None:
        values['instance_uuids'] = [uuid]
    for key, read in (('flavor', flavor), ('image', image),
                      ('requested_destination', destination),
                      ('instance_group', instance_group)):
        if values.get(key) is not None:
            values[key] = read(values[key], '%s.%s' % (path, key))
    if isinstance(values.get('retry'), dict):
        values['retry'] = _retry(values['retry'])
    hints = values.get('scheduler_hints')
    if isinstance(hints, dict):
        values['scheduler_hints'] = {
            k: [str(i) for i in v] if isinstance(v, list) else [str(v)]
            for k, v in hints.items()}
    return values


def is_nova_request_spec(value):
    return is_envelope(value) and value[_NAME] == 'RequestSpec'


# -- what a nova tracker reports ------------------------------------------

#: nova ComputeNode fields the scheduler does not read
COMPUTE_NODE_IGNORED = frozenset({
    'id', 'service_id', 'mapped', 'created_at', 'deleted_at', 'deleted'})


def compute_node_stats(values, path='stats'):
    """A tracker report in this scheduler's ComputeNode fields: nova's
    ``supported_hv_specs``, PCI pool objects and NUMA topology JSON are
    read into ``supported_instances``, flat pools and the topology shape
    of ``scheduler.filters.numa_cells``."""
    values = drop_ignored(unwrap(values), COMPUTE_NODE_IGNORED, path)
    specs = values.pop('supported_hv_specs', None)
    if specs is not None and 'supported_instances' not in values:
        values['supported_instances'] = [_hv_spec(s) for s in specs]
    if values.get('pci_device_pools') is not None:
        values['pci_device_pools'] = [
            _pci_pool(p) for p in values['pci_device_pools']]
    topology = values.get('numa_topology')
    if topology is not None:
        values['numa_topology'] = _numa_topology(topology)
    return values


def _hv_spec(spec):
    if isinstance(spec, dict):
        spec = [spec.get('architecture'), spec.get('hv_type'),
                spec.get('vm_mode')]
    return spec


def _pci_pool(pool):
    if not isinstance(pool, dict):
        return pool
    flat = {k: v for k, v in pool.items() if k != 'tags'}
    flat.update(pool.get('tags') or {})
    return {k: None if v is None else str(v) for k, v in flat.items()}


#: nova NUMACell field -> this scheduler's name for it
_CELL_FIELDS = {'id': 'id', 'cpuset': 'cpus', 'pcpuset': 'pcpus',
                'memory': 'memory_mb', 'memory_usage': 'memory_used_mb',
                'cpu_usage': 'cpu_usage', 'pinned_cpus': 'pinned_cpus',
                'siblings': 'siblings', 'mempages': 'mempages',
                'socket': 'socket'}


def _numa_topology(topology):
    """This scheduler's topology JSON for nova's (JSON text or dict);
    anything else is returned as it came, for the field to judge."""
    if isinstance(topology, str):
        try:
            parsed = json.loads(topology)
        except ValueError:
            return topology
    else:
        parsed = topology
    if not is_envelope(parsed):
        return (json.dumps(parsed, sort_keys=True)
                if isinstance(parsed, dict) else topology)
    cells = []
    for cell in unwrap(parsed).get('cells') or ():
        cells.append({ours: cell[theirs]
                      for theirs, ours in _CELL_FIELDS.items()
                      if cell.get(theirs) is not None})
    return json.dumps({'cells': cells}, sort_keys=True)
