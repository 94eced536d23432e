"""The fold rule: a provider tree as one tracker report that the
scheduler's own report check accepts."""

import uuid

from scheduler import objects
from scheduler.placement_feed import reader
from scheduler.placement_feed import tree
from tests.unit.placement_feed import fake_placement as fakes


def _uuid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def _provider(name, inventories=None, usages=None, traits=(), root=None):
    listed = reader.Listed(uuid=_uuid(name), name=name, generation=1,
                           parent_uuid=root and _uuid(root),
                           root_uuid=_uuid(root or name))
    return reader.Provider(listed=listed, inventories=inventories or {},
                           usages=usages or {}, traits=tuple(traits),
                           aggregates=())


def test_numa_children_add_up_into_the_compute_node():
    root = _provider('cn', {'DISK_GB': fakes.inventory(500)},
                     traits=['COMPUTE_NET_VIF_MODEL_VIRTIO'])
    cells = [_provider('cn_numa%d' % index,
                       {'VCPU': fakes.inventory(8, ratio=4.0, max_unit=8),
                        'MEMORY_MB': fakes.inventory(32768, reserved=256)},
                       usages={'VCPU': 2}, root='cn')
             for index in range(2)]
    stats = tree.report([root] + cells)
    assert stats['kind'] == 'compute'
    assert stats['inventories']['VCPU'] == {
        'total': 16, 'reserved': 0, 'min_unit': 1, 'max_unit': 8,
        'step_size': 1, 'allocation_ratio': 4.0}
    assert stats['inventories']['MEMORY_MB']['reserved'] == 512
    assert (stats['vcpus'], stats['vcpus_used'],
            stats['cpu_allocation_ratio']) == (16, 4, 4.0)
    assert stats['reserved_host_memory_mb'] == 512
    node = objects.ComputeNode.from_stats('cn', 'cn', stats)
    assert node.uuid == _uuid('cn')


def test_different_ratios_add_up_capacities():
    rows = [fakes.inventory(10, reserved=2, ratio=2.0),
            fakes.inventory(4, ratio=1.0)]
    combined = tree.combine(rows)
    assert (combined['total'], combined['reserved'],
            combined['allocation_ratio']) == (20, 0, 1.0)


def test_kinds():
    assert tree.kind_of({'DISK_GB'}, ()) == 'storage'
    assert tree.kind_of({'NET_BW_EGR_KILOBIT_PER_SEC'}, ()) == 'network'
    assert tree.kind_of(set(), ('COMPUTE_STATUS_DISABLED',)) == 'compute'
    assert tree.kind_of({'CUSTOM_LICENSE'}, ()) == 'other'


def test_disabled_trait_disables_and_unknown_names_are_skipped():
    root = _provider('cn', {'VCPU': fakes.inventory(4),
                            'WEIRD': fakes.inventory(1)},
                     usages={'WEIRD': 1},
                     traits=['COMPUTE_STATUS_DISABLED', 'lower_case'])
    skipped = set()
    stats = tree.report([root], skipped)
    assert stats['disabled'] is True
    assert skipped == {'WEIRD', 'lower_case'}
    assert set(stats['inventories']) == {'VCPU'}
    assert stats['used'] == {}
    objects.ComputeNode.from_stats('cn', 'cn', stats)


def test_storage_root_has_no_classic_fields():
    stats = tree.report([_provider('pool', {'DISK_GB': fakes.inventory(
        1000)}, usages={'DISK_GB': 10})])
    assert stats['kind'] == 'storage'
    assert 'local_gb' not in stats and stats['used'] == {'DISK_GB': 10}
    objects.ComputeNode.from_stats('pool', 'pool', stats)


def test_supported_instances_from_the_arch_trait():
    placement = fakes.FakePlacement()
    inventories = {'VCPU': fakes.inventory(8),
                   'MEMORY_MB': fakes.inventory(4096)}
    arm = placement.add('arm', inventories=inventories,
                        traits=['HW_ARCH_AARCH64'])
    plain = placement.add('plain', inventories=inventories)
    read = reader.PlacementReader(placement)
    listed = {rp.uuid: rp for rp in read.list_providers()}
    assert tree.report([read.read_provider(listed[arm])])[
        'supported_instances'] == [['aarch64']]
    # nothing said: ImagePropertiesFilter holds nothing against the host
    assert tree.report([read.read_provider(listed[plain])])[
        'supported_instances'] == [[]]
    # the architecture Nova's API gives, where no trait says one; a
    # trait wins
    assert tree.report([read.read_provider(listed[plain])], arch='x86_64')[
        'supported_instances'] == [['x86_64']]
    assert tree.report([read.read_provider(listed[arm])], arch='x86_64')[
        'supported_instances'] == [['aarch64']]
