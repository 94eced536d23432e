"""Generic tracker reports: names, amounts, and the inventory rows they give.

A tracker of any provider reports, beside (or instead of) nova's compute
fields::

    {'kind': 'storage',
     'inventories': {'DISK_GB': {'total': 10000, 'allocation_ratio': 1.0},
                     'CUSTOM_IOPS': {'total': 50000, 'step_size': 100}},
     'used': {'DISK_GB': 1200},
     'traits': ['STORAGE_DISK_SSD', 'CUSTOM_REPLICATED'],
     'locality': {'availability_zone': 'az1', 'row': 'r1', 'rack': 'r1-07'}}

Contracts:

* a resource class is a standard one (``STANDARD_CLASSES``, placement's
  names) or ``CUSTOM_`` followed by upper-case letters, digits and ``_``;
  a trait is ``CUSTOM_...`` likewise, or a standard trait name of one of
  placement's namespaces (``TRAIT_NAMESPACES``); anything else is an
  ``InvalidField`` naming it, raised where the report is built (client
  and server), so a bad report never reaches the database;
* an inventory takes ``total`` (required), ``reserved`` (0), ``min_unit``
  (1), ``max_unit`` (``total``), ``step_size`` (1) and
  ``allocation_ratio`` (1.0); ``used`` may only name reported classes;
* ``kind`` is a short lower-case name; ``locality`` keys are lower-case
  names; ``locality['availability_zone']`` is the provider's zone unless
  the report also says ``availability_zone``;
* ``inventory_rows(node)`` is what ``scheduler.db.providers`` stores:
  the generic inventories override the classic fields' row of the same
  class, and a report with generic inventories has no classic row whose
  total is zero (a storage backend has no VCPU); ``capacity`` is how
  each row's capacity is derived.
"""

import re

from scheduler import exception

STANDARD_CLASSES = frozenset((
    'VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB', 'PCI_DEVICE', 'SRIOV_NET_VF',
    'NUMA_SOCKET', 'NUMA_CORE', 'NUMA_THREAD', 'NUMA_MEMORY_MB',
    'IPV4_ADDRESS', 'VGPU', 'VGPU_DISPLAY_HEAD', 'PGPU', 'FPGA',
    'NET_BW_EGR_KILOBIT_PER_SEC', 'NET_BW_IGR_KILOBIT_PER_SEC',
    'NET_PACKET_RATE_KILOPACKET_PER_SEC',
    'NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC',
    'NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC', 'MEM_ENCRYPTION_CONTEXT'))
TRAIT_NAMESPACES = ('COMPUTE_', 'HW_', 'STORAGE_', 'NET_', 'MISC_',
                    'OWNER_', 'CUSTOM_')

_CUSTOM = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_TRAIT = re.compile(r'^[A-Z][A-Z0-9_]*$')
_KEY = re.compile(r'^[a-z][a-z0-9_.-]*$')
MAX_NAME = 255
MAX_KIND = 32

_INVENTORY_KEYS = ('total', 'reserved', 'min_unit', 'max_unit',
                   'step_size', 'allocation_ratio')


def check_resource_class(name, path):
    """``name`` if it is a standard or a well-formed custom class."""
    if not isinstance(name, str) or not (
            name in STANDARD_CLASSES
            or (_CUSTOM.fullmatch(name) and len(name) <= MAX_NAME)):
        raise exception.InvalidField(
            field=path, reason='%r is not a resource class: a standard one '
            '(VCPU, DISK_GB, ...) or CUSTOM_ followed by A-Z, 0-9, _' %
            (name,))
    return name


def check_trait(name, path):
    """``name`` if it is a well-formed standard or custom trait."""
    if not isinstance(name, str) or len(name) > MAX_NAME or not (
            _TRAIT.fullmatch(name) and name.startswith(TRAIT_NAMESPACES)
            and (not name.startswith('CUSTOM_') or _CUSTOM.fullmatch(name))):
        raise exception.InvalidField(
            field=path, reason='%r is not a trait: CUSTOM_ or one of %s '
            'followed by A-Z, 0-9, _' % (name, ', '.join(
                TRAIT_NAMESPACES[:-1])))
    return name


def check_kind(kind, path):
    if not isinstance(kind, str) or not _KEY.fullmatch(kind) \
            or len(kind) > MAX_KIND:
        raise exception.InvalidField(
            field=path, reason='%r is not a provider kind: a lower-case '
            'name of at most %d characters' % (kind, MAX_KIND))
    return kind


def check_report(node):
    """Validate the generic fields of ComputeNode ``node`` (in place:
    defaults filled in); returns ``node``."""
    check_kind(node.kind, 'stats.kind')
    inventories = {}
    for rc, inventory in node.inventories.items():
        path = 'stats.inventories.%s' % rc
        inventories[check_resource_class(rc, path)] = _inventory(
            inventory, path)
    node.inventories = inventories
    for rc, amount in node.used.items():
        if rc not in inventories:
            raise exception.InvalidField(
                field='stats.used.%s' % rc, reason='not in inventories')
        if amount < 0:
            raise exception.InvalidField(field='stats.used.%s' % rc,
                                         reason='must not be negative')
    for index, trait in enumerate(node.traits):
        check_trait(trait, 'stats.traits[%d]' % index)
    node.traits = sorted(set(node.traits))
    for key, value in node.locality.items():
        if not _KEY.fullmatch(key) or not value:
            raise exception.InvalidField(
                field='stats.locality.%s' % key, reason='keys are '
                'lower-case names, values non-empty strings')
    zone = node.locality.get('availability_zone')
    if zone and not node.get('availability_zone'):
        node.availability_zone = zone
    return node


def _inventory(values, path):
    unknown = set(values) - set(_INVENTORY_KEYS)
    if unknown:
        raise exception.InvalidField(
            field='%s.%s' % (path, sorted(unknown)[0]),
            reason='unknown field (known: %s)' % ', '.join(_INVENTORY_KEYS))
    if 'total' not in values:
        raise exception.InvalidField(field=path + '.total', reason='missing')
    ints = {}
    for key in _INVENTORY_KEYS[:-1]:
        value = values.get(key)
        if value is not None and (value != int(value) or value < 0):
            raise exception.InvalidField(
                field='%s.%s' % (path, key),
                reason='expected a non-negative integer, got %r' % (value,))
        ints[key] = None if value is None else int(value)
    row = {'total': ints['total'], 'reserved': ints['reserved'] or 0,
           'min_unit': ints['min_unit'] or 1,
           'max_unit': (ints['max_unit'] if ints['max_unit'] is not None
                        else ints['total']),
           'step_size': ints['step_size'] or 1,
           'allocation_ratio': float(values.get('allocation_ratio') or 1.0)}
    if row['max_unit'] < row['min_unit'] and row['total']:
        raise exception.InvalidField(field=path + '.max_unit',
                                     reason='smaller than min_unit')
    return row


def capacity(total, reserved, ratio):
    """What an inventory can hand out: ``(total - reserved) * ratio``,
    rounded down, never negative (stored per inventory, so the claim's SQL
    re-check and the planner read one figure)."""
    return max(int((total - reserved) * ratio), 0)


def inventory_rows(node, classic_rows):
    """The inventory rows of a report: ``classic_rows`` (from nova's
    fields) overridden and completed by the generic ``inventories``."""
    inventories = node.get('inventories') or {}
    if not inventories:
        return classic_rows
    rows = {rc: row for rc, row in classic_rows.items() if row['total']}
    used = node.get('used') or {}
    for rc, inventory in inventories.items():
        inv = {key: (float(value) if key == 'allocation_ratio'
                     else int(value)) for key, value in inventory.items()}
        rows[rc] = dict(
            inv, resource_class=rc, reported_ratio=inv['allocation_ratio'],
            capacity=capacity(inv['total'], inv['reserved'],
                                     inv['allocation_ratio']),
            reported_used=int(used.get(rc, 0)))
    return rows
