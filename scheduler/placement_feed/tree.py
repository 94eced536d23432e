"""One provider tree of Placement as one tracker report: the fold rule.

Nova 34 models a compute node as a root provider (``VCPU``, ``PCPU``,
``MEMORY_MB``, ``DISK_GB``) with children: a PCI device or a parent of
virtual functions per child (``<node>_<address>``, a ``CUSTOM_PCI_<vendor>
_<product>`` or the device spec's class), vGPU parents (``VGPU``),
Neutron's bandwidth and packet-rate providers, and NUMA cells where a
driver reports them. The scheduler's provider is the tree: its compute
group takes resources of any class from anywhere in the tree, as
Placement's unnumbered request group does since microversion 1.29.

``report(members)``, ``members`` the ``reader.Provider`` of one tree with
the root first, is the ``update_resource_stats`` dict of the tree:

* ``inventories``: per resource class, the members' inventories combined
  (``combine``): totals and reserved amounts add up when every member has
  the same allocation ratio; otherwise each member's capacity
  (``generic_inventory.capacity``) adds up, at ratio 1.0. ``min_unit`` is
  the smallest, ``max_unit`` and ``step_size`` the largest (one
  allocation never spans two providers);
* ``used``: the members' usages, per class, added up;
* ``traits``: every member's traits; ``COMPUTE_STATUS_DISABLED`` (Nova's
  mark of a disabled compute service) also sets ``disabled``;
* ``kind``: ``compute`` when the tree has ``VCPU``, ``PCPU`` or
  ``MEMORY_MB``, or its root a ``COMPUTE_`` trait; else ``network`` for
  ``NET_*`` or ``IPV4_ADDRESS`` classes, ``storage`` for ``DISK_GB``,
  ``other`` for anything else;
* for a compute tree, nova's classic fields (``vcpus``, ``memory_mb``,
  ``local_gb``, their ``*_used``, ``reserved_host_*`` and allocation
  ratios) from the combined ``VCPU``, ``MEMORY_MB`` and ``DISK_GB``, for
  the filters and weighers that read nova's HostState numbers, and
  ``supported_instances`` as far as Placement tells it: one
  ``[arch]`` per ``HW_ARCH_<ARCH>`` trait (nova's libvirt driver reports
  the host's), else ``[arch]`` of the ``arch`` the caller knows from
  Nova's API (``nova_hosts.NovaHosts.arch_of``), hypervisor type and VM
  mode unsaid; ``[[]]`` (nothing said) without either.
  ``ImagePropertiesFilter`` holds nothing unsaid against a host.

A class or trait name the scheduler does not accept is left out, and
named in ``skipped`` so the caller can log it once. A tree is a member
of every aggregate any of its members is in (``feed``).
"""

from scheduler import exception
from scheduler.model import generic_inventory

#: os-traits' prefix of a host's CPU architecture (HW_ARCH_X86_64 ...)
ARCH_TRAIT = 'HW_ARCH_'

COMPUTE_CLASSES = frozenset(('VCPU', 'PCPU', 'MEMORY_MB'))
DISABLED_TRAIT = 'COMPUTE_STATUS_DISABLED'
# resource class -> (classic total, used, reserved, ratio) fields
_CLASSIC = {
    'VCPU': ('vcpus', 'vcpus_used', 'reserved_host_cpus',
             'cpu_allocation_ratio'),
    'MEMORY_MB': ('memory_mb', 'memory_mb_used', 'reserved_host_memory_mb',
                  'ram_allocation_ratio'),
    'DISK_GB': ('local_gb', 'local_gb_used', 'reserved_host_disk_mb',
                'disk_allocation_ratio'),
}


def combine(rows):
    """One inventory from the inventories of one class in a tree."""
    ratios = {float(row['allocation_ratio']) for row in rows}
    if len(ratios) == 1:
        total = sum(row['total'] for row in rows)
        reserved = sum(row['reserved'] for row in rows)
        ratio = ratios.pop()
    else:
        total = sum(generic_inventory.capacity(
            row['total'], row['reserved'], float(row['allocation_ratio']))
            for row in rows)
        reserved, ratio = 0, 1.0
    return {'total': total, 'reserved': reserved,
            'min_unit': min(row['min_unit'] for row in rows),
            'max_unit': max(row['max_unit'] for row in rows),
            'step_size': max(row['step_size'] for row in rows),
            'allocation_ratio': ratio}


def kind_of(classes, root_traits):
    if classes & COMPUTE_CLASSES or any(
            trait.startswith('COMPUTE_') for trait in root_traits):
        return 'compute'
    if any(rc.startswith('NET_') or rc == 'IPV4_ADDRESS' for rc in classes):
        return 'network'
    if 'DISK_GB' in classes:
        return 'storage'
    return 'other'


def _accepted(check, name, skipped):
    try:
        return check(name, name) is not None
    except exception.InvalidField:
        skipped.add(name)
        return False


def _fold_inventories(members, skipped):
    by_class, used = {}, {}
    for member in members:
        for rc, row in member.inventories.items():
            if _accepted(generic_inventory.check_resource_class, rc,
                         skipped):
                by_class.setdefault(rc, []).append(row)
        for rc, amount in member.usages.items():
            used[rc] = used.get(rc, 0) + int(amount)
    inventories = {rc: combine(rows) for rc, rows in by_class.items()}
    return inventories, {rc: amount for rc, amount in used.items()
                         if rc in inventories and amount}


def _classic_fields(inventories, used):
    fields = {}
    for rc, (total, used_name, reserved, ratio) in _CLASSIC.items():
        row = inventories.get(rc)
        if row is None:
            continue
        scale = 1024 if rc == 'DISK_GB' else 1   # reserved_host_disk_mb
        fields.update({total: row['total'], used_name: used.get(rc, 0),
                       reserved: row['reserved'] * scale,
                       ratio: row['allocation_ratio']})
    return fields


def report(members, skipped=None, arch=None):
    """The tracker report of one tree (module docstring); ``members[0]``
    is the root, ``arch`` its CPU architecture if known otherwise."""
    skipped = set() if skipped is None else skipped
    inventories, used = _fold_inventories(members, skipped)
    traits = sorted({trait for member in members for trait in member.traits
                     if _accepted(generic_inventory.check_trait, trait,
                                  skipped)})
    kind = kind_of(set(inventories), members[0].traits)
    stats = {'uuid': members[0].listed.uuid, 'kind': kind,
             'inventories': inventories, 'used': used, 'traits': traits,
             'disabled': DISABLED_TRAIT in traits}
    if kind == 'compute':
        stats.update(_classic_fields(inventories, used))
        stats['supported_instances'] = [
            [trait[len(ARCH_TRAIT):].lower()] for trait in traits
            if trait.startswith(ARCH_TRAIT)] or [[arch] if arch else []]
    return stats

