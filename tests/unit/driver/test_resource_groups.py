"""Requests of several resource groups on SQLite: which providers each
group gets, what the database holds afterwards, and why nothing fits."""

import collections

import pytest

from scheduler.db import claims
from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads

from .. import fakes

CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])
UUIDS = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e%02d' % i for i in range(40)]


def _report(db, name, **stats):
    node = objects.ComputeNode.from_stats(name, name, stats)
    db_providers.record_compute_node(db, node, fakes.RATIO_DEFAULTS)


def _cloud(db, racks=('r1', 'r2'), disk=1000):
    """Per rack: two compute hosts, one storage backend (SSD in r1 only);
    one network segment per row (row w1 holds every rack)."""
    for rack in racks:
        for i in range(2):
            _report(db, 'c-%s-%d' % (rack, i), vcpus=8, memory_mb=16384,
                    local_gb=100, locality={'rack': rack, 'row': 'w1'})
        _report(db, 'vol-%s' % rack, kind='storage',
                inventories={'DISK_GB': {'total': disk}},
                traits=['STORAGE_DISK_SSD'] if rack == 'r1' else [],
                locality={'rack': rack, 'row': 'w1'})
    _report(db, 'net-w1', kind='network',
            inventories={'NET_BW_EGR_KILOBIT_PER_SEC': {'total': 10000}},
            locality={'row': 'w1'})


def _spec(groups, locality=(), num_instances=1, vcpus=2):
    spec = fakes.request_spec(vcpus=vcpus, memory_mb=1024,
                              num_instances=num_instances)
    spec.resource_groups = [objects.ResourceGroup(**g) for g in groups]
    spec.locality = [objects.LocalityRule(**r) for r in locality]
    spec.obj_complete('spec')
    return spec


COMPUTE = {'name': 'compute', 'kind': 'compute'}
VOLUME = {'name': 'volume', 'kind': 'storage',
          'resources': {'DISK_GB': 100}}
PORT = {'name': 'port', 'kind': 'network',
        'resources': {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}}
SAME_RACK = {'groups': ['compute', 'volume'], 'scope': 'rack',
             'policy': 'same'}
SAME_ROW = {'groups': ['port', 'volume'], 'scope': 'row', 'policy': 'same'}


def _rack(name):
    return name.split('-')[1]


def test_volume_alone_goes_to_a_storage_backend_with_its_trait(db, driver):
    _cloud(db)
    ssd = dict(VOLUME, required_traits=['STORAGE_DISK_SSD'])
    [[selection]] = driver.select_destinations(
        CTXT, _spec([ssd]), instance_uuids=[UUIDS[0]])
    assert selection.provider_for('volume')[:2] == ('vol-r1', 'vol-r1')
    assert selection.host == 'vol-r1'
    [row] = claims.list_allocations(db)
    assert (row['host'], row['resource_class'], row['amount']) == (
        'vol-r1', 'DISK_GB', 100)


def test_boot_from_volume_with_port_keeps_hard_locality(db, driver):
    _cloud(db, racks=('r1', 'r2', 'r3'))
    spec = _spec([COMPUTE, VOLUME, PORT], [SAME_RACK, SAME_ROW],
                 num_instances=6)
    result = driver.select_destinations(CTXT, spec,
                                        instance_uuids=UUIDS[:6])
    for [selection] in result:
        compute, volume, port = (selection.provider_for(n)[0]
                                 for n in ('compute', 'volume', 'port'))
        assert compute.startswith('c-') and _rack(compute) == _rack(volume)
        assert port == 'net-w1'
        assert selection.host == compute
    held = collections.Counter(
        (a['consumer_uuid'], a['host'].split('-')[0])
        for a in claims.list_allocations(db))
    # every instance holds a compute, a storage and a network claim
    assert {(c, kind) for c, kind in held} == {
        (c, kind) for c in UUIDS[:6] for kind in ('c', 'vol', 'net')}


def test_delete_allocations_releases_every_group(db, driver):
    _cloud(db)
    driver.select_destinations(CTXT, _spec([COMPUTE, VOLUME, PORT]),
                               instance_uuids=[UUIDS[0]])
    assert len({a['host'] for a in claims.list_allocations(db)}) == 3
    claims.delete_allocations(db, UUIDS[0])
    assert claims.list_allocations(db) == []
    claimed = {rc: inv['claimed'] for p in provider_reads.list_providers(db)
               for rc, inv in p['inventories'].items() if inv['claimed']}
    assert claimed == {}


def test_hard_rule_without_a_common_rack_is_no_valid_host(db, driver):
    _cloud(db)
    ssd = dict(VOLUME, required_traits=['STORAGE_DISK_SSD'])
    # room for compute only in rack r2, the SSD backend is in r1
    for i in range(2):
        _report(db, 'c-r1-%d' % i, vcpus=1, memory_mb=16384, local_gb=100,
                cpu_allocation_ratio=1.0, locality={'rack': 'r1'})
    with pytest.raises(exception.NoValidHost) as exc:
        driver.select_destinations(CTXT, _spec([COMPUTE, ssd], [SAME_RACK]),
                                   instance_uuids=[UUIDS[0]])
    reason = exc.value.kwargs['reason']
    assert 'GroupPlacement' in reason and 'hard locality rules (rack)' in \
        reason, reason
    assert claims.list_allocations(db) == []


def test_soft_rule_prefers_the_volume_rack_and_falls_back(db, driver):
    _cloud(db, racks=('r1', 'r2', 'r3', 'r4'), disk=300)
    for i in range(2):  # no room for an instance in rack r4
        _report(db, 'c-r4-%d' % i, vcpus=1, memory_mb=16384, local_gb=100,
                cpu_allocation_ratio=1.0, locality={'rack': 'r4'})
    soft = dict(SAME_RACK, hard=False)
    spec = _spec([COMPUTE, VOLUME], [soft], num_instances=12, vcpus=4)
    result = driver.select_destinations(CTXT, spec,
                                        instance_uuids=UUIDS[:12])
    same = sum(_rack(s.provider_for('compute')[0]) ==
               _rack(s.provider_for('volume')[0]) for [s] in result)
    # 4 backends of room for 3 volumes each: the 3 volumes of rack r4
    # get their instance elsewhere, the 9 others in their rack
    assert len(result) == 12 and same == 9


def test_request_is_all_or_nothing(db, driver):
    _cloud(db, disk=250)
    # 2 backends of 250 GB: room for 4 volumes of 100 GB, not 5
    spec = _spec([COMPUTE, VOLUME], num_instances=5)
    with pytest.raises(exception.NoValidHost):
        driver.select_destinations(CTXT, spec, instance_uuids=UUIDS[:5])
    assert claims.list_allocations(db) == []


def test_classic_request_never_lands_on_a_storage_backend(db, driver):
    _cloud(db)
    _report(db, 'vol-big', kind='storage',
            inventories={'VCPU': {'total': 1000},
                         'MEMORY_MB': {'total': 10 ** 6}})
    result = driver.select_destinations(
        CTXT, fakes.request_spec(vcpus=1, num_instances=8),
        instance_uuids=UUIDS[:8])
    assert {s.host for [s] in result} <= {
        'c-r1-0', 'c-r1-1', 'c-r2-0', 'c-r2-1'}
    assert all(s.provider_for('compute')[0] == s.host for [s] in result)


def test_forbidden_and_any_traits(db, driver):
    _cloud(db, racks=('r1', 'r2', 'r3'))
    _report(db, 'vol-r3', kind='storage',
            inventories={'DISK_GB': {'total': 1000}},
            traits=['CUSTOM_GOLD'], locality={'rack': 'r3'})
    group = dict(VOLUME, forbidden_traits=['STORAGE_DISK_SSD'],
                 any_traits=[['CUSTOM_GOLD', 'CUSTOM_SILVER']])
    [[selection]] = driver.select_destinations(
        CTXT, _spec([group]), instance_uuids=[UUIDS[0]])
    assert selection.host == 'vol-r3'


def test_alternates_keep_the_other_groups_and_the_hard_rules(db, driver):
    _cloud(db, racks=('r1', 'r2'))
    [[chosen, *alternates]] = driver.select_destinations(
        CTXT, _spec([COMPUTE, VOLUME], [SAME_RACK]),
        instance_uuids=[UUIDS[0]], return_alternates=True)
    assert alternates, 'the other compute host of the rack'
    for alt in alternates:
        assert alt.is_alternate and alt.allocation_id is None
        assert alt.provider_for('volume') == chosen.provider_for('volume')
        assert _rack(alt.host) == _rack(chosen.provider_for('volume')[0])
        assert alt.host != chosen.host


def test_anti_affinity_counts_only_the_instances_hosts(db, driver):
    _cloud(db, racks=('r1',))
    spec = _spec([COMPUTE, VOLUME], num_instances=2)
    spec.instance_group = objects.InstanceGroup(
        uuid=UUIDS[39], policy='anti-affinity', members=[], hosts=[])
    spec.obj_complete('spec')
    result = driver.select_destinations(CTXT, spec,
                                        instance_uuids=UUIDS[:2])
    # both volumes on the one backend, the instances on two hosts
    assert {s.provider_for('volume')[0] for [s] in result} == {'vol-r1'}
    assert len({s.host for [s] in result}) == 2


def test_hard_different_keeps_groups_apart(db, driver):
    _cloud(db, racks=('r1', 'r2'))
    replica = dict(VOLUME, name='replica')
    apart = {'groups': ['volume', 'replica'], 'scope': 'rack',
             'policy': 'different'}
    for index in range(4):
        [[selection]] = driver.select_destinations(
            CTXT, _spec([VOLUME, replica], [apart]),
            instance_uuids=[UUIDS[index]])
        assert {selection.provider_for('volume')[0],
                selection.provider_for('replica')[0]} == {'vol-r1', 'vol-r2'}


def test_same_host_scope(db, driver):
    _report(db, 'hci1', vcpus=8, memory_mb=16384, local_gb=100)
    _report(db, 'hci2', vcpus=8, memory_mb=16384, local_gb=100)
    # a storage pool on each of the two hosts (node 'pool')
    for name in ('hci1', 'hci2'):
        node = objects.ComputeNode.from_stats(name, 'pool', {
            'kind': 'storage', 'inventories': {'DISK_GB': {'total': 500}}})
        db_providers.record_compute_node(db, node, fakes.RATIO_DEFAULTS)
    same = {'groups': ['compute', 'volume'], 'scope': 'host',
            'policy': 'same'}
    result = driver.select_destinations(
        CTXT, _spec([COMPUTE, VOLUME], [same], num_instances=4),
        instance_uuids=UUIDS[:4])
    for [selection] in result:
        host, node, _ = selection.provider_for('volume')
        assert host == selection.host and node == 'pool'
