"""PCI aliases, the PCI requests of a flavor, and host device pools.

* ``parse_aliases(entries)`` reads ``[pci] alias`` (JSON objects, see
  ``scheduler.conf.pci``) into ``{name: Alias}``: the ``{tag: value}``
  specs a device pool must carry (one per entry of that name) and the
  alias's ``numa_policy``; it raises ``ValueError`` naming the bad entry,
  so a plugin built from it fails at start-up.
* ``parse_requests(extra_specs, aliases, numa_policy)`` reads the flavor
  extra spec ``pci_passthrough:alias`` = ``"<alias>:<count>[, ...]"``
  (count 1 if omitted) into ``[PciRequest]``; an unknown alias or a bad
  count raises ``InvalidField`` naming the extra spec. ``numa_policy``
  (the flavor's ``hw:pci_numa_affinity_policy`` or the image's
  ``hw_pci_numa_affinity_policy``), when given, overrides the aliases'.
  ``requests_of(request, aliases)`` does it once per request.
* ``host_pools(attributes)`` reads the tracker's ``pci_device_pools``
  (string tags plus a ``count``) into ``((tags, count), ...)``;
  ``pools_of(host)`` does it once per report of a host (``HostView.derived``)
  and ``free_devices(table)`` / ``devices_wanted(requests)`` give the
  vectorized pre-check (a host with fewer free devices in all than the
  requests want cannot satisfy them).
* ``can_satisfy(pools, requests, cells=None)`` says whether the pools hold
  enough matching devices for every request at once. With ``cells``, a pair
  (the ids of the host NUMA cells chosen for a guest with a NUMA topology,
  ``{cell id: socket}`` of every host cell), each request's NUMA affinity
  policy also limits the pools it may use, as nova's: ``required``, a device on
  one of those cells; ``legacy`` (the default), the same or a device without
  NUMA information; ``socket``, a device on one of their sockets;
  ``preferred``, any device.

``vendor_id`` and ``product_id`` compare case-insensitively; every other tag
exactly (as a string). As in nova, some devices are only handed to requests
that ask for them by name: physical functions (``dev_type`` ``type-PF``)
and remote-managed devices (``remote_managed`` ``true``); vDPA devices
(``type-VDPA``) never go to an alias, which cannot ask for them.
"""

import collections
import json

from scheduler.model import cpu_policy
from scheduler import exception

EXTRA_SPEC = 'pci_passthrough:alias'
# as nova, vDPA devices cannot be asked for by alias
_DEVICE_TYPES = ('type-PCI', 'type-PF', 'type-VF')
_NUMA_POLICIES = ('required', 'legacy', 'preferred', 'socket')
_HEX_TAGS = ('vendor_id', 'product_id')

# (tag, value) of devices a request gets only if its spec names them
_ONLY_IF_ASKED = (('dev_type', 'type-PF'), ('dev_type', 'type-VDPA'),
                  ('remote_managed', 'true'))

PciRequest = collections.namedtuple('PciRequest',
                                    'alias count specs numa_policy')
Alias = collections.namedtuple('Alias', 'specs numa_policy')
POLICY_SETTING = 'pci_numa_affinity_policy'



def _normal(tag, value):
    value = str(value)
    return value.lower() if tag in _HEX_TAGS else value


def _parse_alias(entry):
    alias = json.loads(entry)
    if not isinstance(alias, dict):
        raise ValueError('not a JSON object')
    name = alias.pop('name', None)
    if not isinstance(name, str) or not name:
        raise ValueError('"name" missing or not a string')
    policy = alias.pop('numa_policy', None)
    if policy is not None and policy not in _NUMA_POLICIES:
        raise ValueError('numa_policy must be one of %s' %
                         ', '.join(_NUMA_POLICIES))
    device_type = alias.pop('device_type', None)
    if device_type is not None:
        if device_type not in _DEVICE_TYPES:
            raise ValueError('device_type must be one of %s' %
                             ', '.join(_DEVICE_TYPES))
        alias['dev_type'] = device_type
    for tag, value in alias.items():
        if isinstance(value, (dict, list)) or value is None:
            raise ValueError('%s must be a string or number' % tag)
    return name, {tag: _normal(tag, v) for tag, v in alias.items()}, policy


def parse_aliases(entries):
    specs, policies = {}, {}
    for entry in entries:
        try:
            name, spec, policy = _parse_alias(entry)
            policy = policy or 'legacy'  # nova's default
            if policies.setdefault(name, policy) != policy:
                raise ValueError('every entry of one name must have the '
                                 'same numa_policy')
            if name in specs and specs[name][0].get('dev_type') != \
                    spec.get('dev_type'):
                raise ValueError('every entry of one name must have the '
                                 'same device_type')
        except ValueError as exc:
            raise ValueError('invalid [pci] alias %r: %s' % (entry, exc))
        specs.setdefault(name, []).append(spec)
    return {name: Alias(specs[name], policies[name])
            for name in specs}


def requests_of(request, aliases):
    """The PCI requests of a RequestState, derived once per request."""
    def compute():
        field, policy = cpu_policy.setting(request.spec, POLICY_SETTING)
        if policy is not None and policy not in _NUMA_POLICIES:
            raise exception.InvalidField(
                field=field, reason='expected one of %s, got %r' % (
                    ', '.join(_NUMA_POLICIES), policy))
        return parse_requests(request.spec.flavor.get('extra_specs'),
                              aliases, policy)
    return request.derived('pci.requests', compute)


def parse_requests(extra_specs, aliases, numa_policy=None):
    text = (extra_specs or {}).get(EXTRA_SPEC)
    if not text:
        return []
    field = 'flavor.extra_specs.%s' % EXTRA_SPEC
    requests = []
    for item in text.split(','):
        name, _, count = (part.strip() for part in item.partition(':'))
        if name not in aliases:
            raise exception.InvalidField(
                field=field, reason='alias %r is not defined in [pci] '
                'alias (defined: %s)' % (name, ', '.join(sorted(aliases))
                                         or 'none'))
        try:
            count = int(count or 1)
            if count < 1:
                raise ValueError
        except ValueError:
            raise exception.InvalidField(
                field=field, reason='count of %r must be a positive '
                'integer' % item.strip())
        alias = aliases[name]
        requests.append(PciRequest(name, count, alias.specs,
                                   numa_policy or alias.numa_policy))
    return requests


def host_pools(attributes):
    """((tags, count), ...) of the pools with free devices."""
    pools = []
    for pool in attributes.get('pci_device_pools') or ():
        try:
            count = int(pool.get('count') or 0)
        except (TypeError, ValueError, AttributeError):
            continue
        tags = {tag: _normal(tag, v) for tag, v in pool.items()
                if tag != 'count' and v is not None}
        if count > 0:
            pools.append((tags, count))
    return tuple(pools)


def pools_of(host):
    """``host_pools`` of a HostView, once per change of its row."""
    return host.derived('pci_pools', host_pools)


def free_devices(table):
    """Free devices of every row, all pools together (float column, kept
    by the table as hosts report)."""
    return table.column('pci_free_devices')


def devices_wanted(requests):
    """How many devices ``requests`` take in all: a host with fewer free
    devices cannot satisfy them (a vectorized pre-check)."""
    return sum(request.count for request in requests)


def _matches(tags, specs):
    for tag, value in _ONLY_IF_ASKED:
        if tags.get(tag) == value and not any(
                spec.get(tag) == value for spec in specs):
            return False
    return any(all(tags.get(tag) == value for tag, value in spec.items())
               for spec in specs)


def _numa_node(tags):
    try:
        return int(tags.get('numa_node'))
    except (TypeError, ValueError):
        return None  # absent, None or 'None': no NUMA information


def _near(tags, policy, cells):
    """Whether a pool's NUMA node suits ``policy`` for ``cells``."""
    if cells is None or policy == 'preferred':
        return True
    chosen, socket_of = cells
    node = _numa_node(tags)
    if node is None:
        return policy == 'legacy'
    if policy == 'socket':
        sockets = {socket_of.get(c) for c in chosen} - {None}
        return socket_of.get(node) in sockets
    return node in chosen


def can_satisfy(pools, requests, cells=None):
    """Greedy, most constrained request first: a request's devices come
    from the first matching pools that still have some."""
    left = [count for _, count in pools]
    matching = [[i for i, (tags, _) in enumerate(pools)
                 if _matches(tags, request.specs)
                 and _near(tags, request.numa_policy, cells)]
                for request in requests]
    order = sorted(range(len(requests)),
                   key=lambda r: sum(left[i] for i in matching[r]))
    for r in order:
        need = requests[r].count
        for i in matching[r]:
            taken = min(need, left[i])
            left[i] -= taken
            need -= taken
            if not need:
                break
        if need:
            return False
    return True
