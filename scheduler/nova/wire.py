"""Nova's scheduler RPC 4.x on the wire: its primitives in, its answers out.

Nothing of nova is imported: nova's objects arrive as their primitives
(``nova_object.name``, ``nova_object.namespace: nova``...) and are read by
``scheduler.objects.nova_compat`` (the one reader of nova's payloads) into
the scheduler's own objects; answers are written as the primitives nova's
``NovaObjectSerializer`` rebuilds.

In, per RPC version of ``select_destinations`` (nova/scheduler/rpcapi.py):

* 4.0-4.2: ``request_spec`` and ``filter_properties``, nova's legacy dicts
  (``RequestSpec.from_primitives``);
* 4.3: ``spec_obj``, a nova RequestSpec primitive (``RequestSpec.
  from_nova``); 4.4 adds ``instance_uuids``; 4.5 ``return_objects`` and
  ``return_alternates``.

A ``requested_destination`` that names no host (nova's conductor sends
one for every resize and cold migration, naming only the instance's cell,
``MigrationTask._set_requested_destination_cell``) restricts nothing here:
the hosts are all in ``[nova] cell_uuid``. If it names another cell and
does not allow a cross-cell move, no host here can take the instance:
``NoValidHost`` (``hostless_destination``).

Before 4.4 nova names only the first instance (``RequestSpec.
instance_uuid``): ``consumers`` completes the list to ``num_instances``
with generated consumers, whose claims a tracker's sync never confirms
and the claim sweeper releases after the grace period.

A rebuild with a new image is a check, not a placement (the hint
``_nova_check_type: ['rebuild']``, the instance's host and node as
``force_hosts`` and ``force_nodes``; ``is_rebuild_check``): the endpoint
answers it
from the filters that judge the image, claims nothing and writes nothing
to Placement, as nova-scheduler does.

Out:

* ``return_objects`` true: one list per instance of nova ``Selection``
  1.1 primitives (``selection``), the claimed host first, then the
  alternates if ``return_alternates``;
* otherwise (every pin before 4.5): one host dict per instance,
  ``{"host", "nodename", "limits"}``, as nova's ``Selection.to_dict``;
* no host: ``NoValidHost``, which oslo.messaging sends as module
  ``nova.exception``, class ``NoValidHost``, so that nova's client
  rebuilds nova's own exception with the diagnosis as its reason.

``NovaSerializer`` reads nova's request context (its ``to_dict``) into the
scheduler's, adding ``[nova] granted_roles``.
"""

import json

from oslo_utils import timeutils

from scheduler import exception
from scheduler.model import resource_classes as rcs
from scheduler import objects
from scheduler.objects import nova_compat

NAMESPACE = 'nova'
#: the data of a nova object's primitive
_DATA = 'nova_object.data'
SELECTION_VERSION = '1.1'
LIMITS_VERSION = '1.0'
#: the Placement microversion of nova 34's allocation requests
ALLOCATION_REQUEST_VERSION = '1.36'

#: nova SchedulerLimits field -> the resource class it bounds
_LIMITS = (('vcpu', rcs.VCPU), ('memory_mb', rcs.MEMORY_MB),
           ('disk_gb', rcs.DISK_GB))

#: the arguments nova sends, per method (any other is refused by name)
ARGUMENTS = {
    'select_destinations': ('request_spec', 'filter_properties',
                            'spec_obj', 'instance_uuids', 'return_objects',
                            'return_alternates'),
    'update_aggregates': ('aggregates',),
    'delete_aggregate': ('aggregate',),
    'update_instance_info': ('host_name', 'instance_info'),
    'delete_instance_info': ('host_name', 'instance_uuid'),
    'sync_instance_info': ('host_name', 'instance_uuids'),
}


#: nova-scheduler's reason, which nova shows the instance's owner
NO_VALID_HOST_REASON = 'There are not enough hosts available.'


class NoValidHost(exception.NoValidHost):
    """Sent as ``nova.exception.NoValidHost(reason=...)``: oslo.messaging
    names a remote exception by its class's module and name, and nova's
    client rebuilds it from ``args`` (the message) and ``kwargs``."""

    def __init__(self, reason):
        super().__init__(reason=reason)
        self.kwargs = {'reason': reason}


NoValidHost.__module__ = 'nova.exception'


def check_arguments(method, args):
    """Refuse an argument nova's ``method`` does not take, by name."""
    for name in args:
        if name not in ARGUMENTS.get(method, ()):
            raise exception.InvalidField(
                field=name, reason='unknown argument (accepted: %s)' %
                ', '.join(ARGUMENTS.get(method, ())))


# -- in ---------------------------------------------------------------------

def request_spec(spec_obj=None, request_spec=None, filter_properties=None,
                 cell_uuid=None):
    """The scheduler's RequestSpec of a 4.3+ ``spec_obj`` or of the
    legacy pair of 4.0-4.2; ``cell_uuid`` the cell of the hosts
    (``hostless_destination``)."""
    if spec_obj is not None:
        if not nova_compat.is_nova_request_spec(spec_obj):
            raise exception.InvalidField(
                field='spec_obj', reason='expected a nova RequestSpec')
        data = spec_obj[_DATA]
        if isinstance(data, dict) and hostless_destination(
                data.get('requested_destination'), cell_uuid):
            spec_obj = dict(spec_obj, **{_DATA: _without(
                data, 'requested_destination')})
        return objects.RequestSpec.from_nova(spec_obj)
    if request_spec is None:
        raise exception.InvalidField(field='spec_obj', reason='missing')
    if isinstance(filter_properties, dict) and hostless_destination(
            filter_properties.get('requested_destination'), cell_uuid):
        filter_properties = _without(filter_properties,
                                     'requested_destination')
    return objects.RequestSpec.from_primitives(request_spec,
                                               filter_properties)


def _without(values, key):
    return {k: v for k, v in values.items() if k != key}


def hostless_destination(destination, cell_uuid=None):
    """Whether nova's ``requested_destination`` names no host (only a
    cell, as a resize's does), and so restricts nothing here; raise
    ``NoValidHost`` if it confines the request to a cell other than
    ``cell_uuid``."""
    values = nova_compat.unwrap(destination)
    if not isinstance(values, dict) or values.get('host') is not None or \
            values.get('node') is not None:
        return False   # read (or refused by name) as any destination
    cell = values.get('cell')
    wanted = cell.get('uuid') if isinstance(cell, dict) else None
    if wanted and cell_uuid and wanted != cell_uuid and not values.get(
            'allow_cross_cell_move'):
        raise NoValidHost(
            'the request is confined to cell %s (requested_destination) '
            'and the hosts of this scheduler are in cell %s ([nova] '
            'cell_uuid)' % (wanted, cell_uuid))
    return True


def is_rebuild_check(spec):
    """True if nova asks whether an instance may stay on its host with
    a new image (a rebuild: the hint ``_nova_check_type`` is
    ``['rebuild']``): nova-scheduler then runs the filters that judge
    the image on that host, and claims nothing."""
    hints = spec.get('scheduler_hints') or {}
    return list(hints.get('_nova_check_type') or ()) == ['rebuild']


def named_consumers(spec, instance_uuids):
    """The instances nova named: ``instance_uuids`` (4.4+), else those
    of the request spec (the first only, before 4.4)."""
    if instance_uuids:
        return list(instance_uuids)
    return list(spec.get('instance_uuids') or [])[:spec.num_instances]


def consumers(spec, instance_uuids, new_uuid):
    """The consumer of each instance: those nova named, completed with
    ``new_uuid()`` to ``num_instances`` (module docstring)."""
    named = named_consumers(spec, instance_uuids)
    if instance_uuids:
        return named
    return named + [new_uuid()
                    for _ in range(spec.num_instances - len(named))]


def aggregate(primitive, path):
    """The scheduler's Aggregate of a nova Aggregate primitive."""
    values = nova_compat.unwrap(primitive)
    if not isinstance(values, dict):
        raise exception.InvalidField(field=path,
                                     reason='expected a nova Aggregate')
    metadata = values.get('metadata') or {}
    return objects.Aggregate().obj_set_from_dict({
        'uuid': values.get('uuid'), 'name': values.get('name'),
        'hosts': list(values.get('hosts') or []),
        'metadata': {k: str(v) for k, v in metadata.items()},
    }, path).obj_complete(path)


def aggregates(primitives):
    items = nova_compat.unwrap(primitives)
    items = items if isinstance(items, list) else [items]
    return [aggregate(item, 'aggregates[%d]' % index)
            for index, item in enumerate(items)]


#: nova Instance field -> InstanceInfo field
_INSTANCE_FIELDS = {'uuid': 'uuid', 'node': 'node',
                    'project_id': 'project_id', 'user_id': 'user_id',
                    'task_state': 'task_state'}


def instance_infos(host_name, primitive):
    """InstanceInfo objects of a nova Instance or InstanceList primitive
    (``update_instance_info``) on host ``host_name``."""
    items = nova_compat.unwrap(primitive)
    items = items if isinstance(items, list) else [items]
    infos = []
    for index, item in enumerate(items):
        path = 'instance_info[%d]' % index
        if not isinstance(item, dict):
            raise exception.InvalidField(field=path,
                                         reason='expected a nova Instance')
        values = {ours: item[theirs]
                  for theirs, ours in _INSTANCE_FIELDS.items()
                  if item.get(theirs) is not None}
        values['host'] = host_name
        flavor = nova_compat.flavor(item.get('flavor'), path + '.flavor')
        if isinstance(flavor, dict):
            values['flavor'] = objects.Flavor().obj_set_from_dict(
                flavor, path + '.flavor').obj_complete(path + '.flavor')
        infos.append(objects.InstanceInfo().obj_set_from_dict(
            values, path).obj_complete(path))
    return infos


def aggregate_uuid(primitive):
    """The UUID of the aggregate ``delete_aggregate`` names."""
    values = nova_compat.unwrap(primitive)
    return values.get('uuid') if isinstance(values, dict) else values


# -- out --------------------------------------------------------------------

def _primitive(name, version, data):
    return {'nova_object.name': name,
            'nova_object.namespace': NAMESPACE,
            'nova_object.version': version,
            'nova_object.data': data,
            'nova_object.changes': sorted(data)}


def limits_dict(selection):
    """nova's SchedulerLimits fields of a selection's limits (only the
    resources nova's object has; the others are not sent)."""
    limits = selection.get('limits') or {}
    return {field: limits[rc] for field, rc in _LIMITS if rc in limits}


def root_targets(selection, resources):
    """Every class of ``resources`` on the selection's node, the root of
    its tree (what ``answer`` names without a Placement to ask)."""
    return {selection.compute_node_uuid: {'resources': dict(resources)}}


def allocation_request(selection, resources, targets=root_targets):
    """Placement's allocation request of ``resources`` in the selection's
    tree, as nova's allocation candidates carry it (JSON):
    ``targets(selection, resources)`` says which provider of the tree
    takes which class (provider uuid -> ``{"resources": ...}``)."""
    node = selection.compute_node_uuid
    allocations = targets(selection, resources)
    providers = [node] + sorted(set(allocations) - {node})
    return json.dumps({'allocations': allocations,
                       'mappings': {'': providers}}, sort_keys=True)


def selection(sel, cell_uuid, zone, resources, targets=root_targets):
    """A nova Selection 1.1 primitive of one of the scheduler's
    selections; ``resources`` what was claimed for its instance,
    ``targets`` as ``allocation_request``'s."""
    limits = dict({field: None for field, _rc in _LIMITS},
                  numa_topology=None, **limits_dict(sel))
    return _primitive('Selection', SELECTION_VERSION, {
        'compute_node_uuid': sel.compute_node_uuid,
        'service_host': sel.host,
        'nodename': sel.nodename,
        'cell_uuid': cell_uuid,
        'limits': _primitive('SchedulerLimits', LIMITS_VERSION, limits),
        'allocation_request': allocation_request(sel, resources, targets),
        'allocation_request_version': ALLOCATION_REQUEST_VERSION,
        'availability_zone': zone,
    })


def host_dict(sel):
    """nova's legacy answer of one instance: ``Selection.to_dict``."""
    return {'host': sel.host, 'nodename': sel.nodename,
            'limits': limits_dict(sel)}


def answer(selections, return_objects, cell_uuid, zone_of,
           targets=root_targets):
    """What nova's client expects back (module docstring);
    ``zone_of(selection)`` is the availability zone of its host,
    ``targets`` as ``allocation_request``'s."""
    if not return_objects:
        return [host_dict(per_instance[0]) for per_instance in selections]
    answers = []
    for per_instance in selections:
        resources = dict(per_instance[0].get('allocation') or {})
        answers.append([selection(sel, cell_uuid, zone_of(sel), resources,
                                  targets) for sel in per_instance])
    return answers


# -- the request context ----------------------------------------------------

class NovaSerializer(objects.SchedulerObjectSerializer):
    """The serializer of the nova endpoint: nova's request context in
    (plus ``granted_roles``); nova primitives stay the dicts they are
    (the endpoint reads them), answers are already primitives.

    Nova sends no send time; its context's ``timestamp`` (when nova made
    the context) stands for it, so that the copies of one fanout cast,
    stored by every worker, carry one stamp and a late copy never undoes
    a later cast (``scheduler.db.send_order``)."""

    def __init__(self, granted_roles=()):
        super().__init__()
        self.granted_roles = list(granted_roles)

    def deserialize_context(self, context):
        ctxt = super().deserialize_context(context)
        roles = list(ctxt.roles or [])
        ctxt.roles = roles + [r for r in self.granted_roles
                              if r not in roles]
        if ctxt.sent_at is None and isinstance(context, dict):
            ctxt.sent_at = _timestamp(context.get('timestamp'))
        return ctxt


def _timestamp(value):
    """nova's context timestamp (naive UTC text), or None."""
    try:
        return timeutils.normalize_time(timeutils.parse_isotime(value))
    except (TypeError, ValueError):
        return None
