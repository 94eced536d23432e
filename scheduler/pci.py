"""PCI aliases, the PCI requests of a flavor, and host device pools.

* ``parse_aliases(entries)`` reads ``[pci] alias`` (JSON objects, see
  ``scheduler.conf.pci``) into ``{name: [spec, ...]}``, a spec being the
  ``{tag: value}`` a device pool must carry; it raises ``ValueError`` naming
  the bad entry, so a plugin built from it fails at start-up.
* ``parse_requests(extra_specs, aliases)`` reads the flavor extra spec
  ``pci_passthrough:alias`` = ``"<alias>:<count>[, ...]"`` (count 1 if
  omitted) into ``[PciRequest]``; an unknown alias or a bad count raises
  ``InvalidField`` naming the extra spec.
* ``host_pools(attributes)`` reads the tracker's ``pci_device_pools``
  (string tags plus a ``count``) into ``[(tags, count)]``.
* ``can_satisfy(pools, requests)`` says whether the pools hold enough
  matching devices for every request at once.

``vendor_id`` and ``product_id`` compare case-insensitively; every other tag
exactly (as a string). As in nova, some devices are only handed to requests
that ask for them by name: physical functions (``dev_type`` ``type-PF``),
vDPA devices (``type-VDPA``) and remote-managed devices
(``remote_managed`` ``true``); a request for a vendor and product alone
never gets them.
"""

import collections
import json

from scheduler import exception

EXTRA_SPEC = 'pci_passthrough:alias'
_DEVICE_TYPES = ('type-PCI', 'type-PF', 'type-VF', 'type-VDPA')
_NUMA_POLICIES = ('required', 'legacy', 'preferred', 'socket')
_HEX_TAGS = ('vendor_id', 'product_id')

# (tag, value) of devices a request gets only if its spec names them
_ONLY_IF_ASKED = (('dev_type', 'type-PF'), ('dev_type', 'type-VDPA'),
                  ('remote_managed', 'true'))

PciRequest = collections.namedtuple('PciRequest', 'alias count specs')


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
    return name, {tag: _normal(tag, v) for tag, v in alias.items()}


def parse_aliases(entries):
    aliases = {}
    for entry in entries:
        try:
            name, spec = _parse_alias(entry)
        except ValueError as exc:
            raise ValueError('invalid [pci] alias %r: %s' % (entry, exc))
        aliases.setdefault(name, []).append(spec)
    return aliases


def parse_requests(extra_specs, aliases):
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
        requests.append(PciRequest(name, count, aliases[name]))
    return requests


def host_pools(attributes):
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
    return pools


def _matches(tags, specs):
    for tag, value in _ONLY_IF_ASKED:
        if tags.get(tag) == value and not any(
                spec.get(tag) == value for spec in specs):
            return False
    return any(all(tags.get(tag) == value for tag, value in spec.items())
               for spec in specs)


def can_satisfy(pools, requests):
    """Greedy, most constrained request first: a request's devices come
    from the first matching pools that still have some."""
    left = [count for _, count in pools]
    matching = [[i for i, (tags, _) in enumerate(pools)
                 if _matches(tags, request.specs)] for request in requests]
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
