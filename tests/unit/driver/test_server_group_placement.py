"""FilterScheduler on SQLite with server groups and same_host /
different_host hints: every instance of a request, and every later
request of the same group, respects the policy; a request that cannot
leaves no claim behind."""

import collections

import numpy as np
import pytest

from scheduler.service import composition
from scheduler.db import claims
from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.driver import plugins
from scheduler.db import groups as db_groups
from scheduler.db import instances as db_instances
from scheduler.driver import filter_scheduler
from scheduler.host_state import HostStateCache

from .. import fakes
from ..edge import edge

CTXT = sched_context.RequestContext(project_id='p1')
GROUP = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f'
C = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e%02d' % i for i in range(12)]
FILTERS = ['ComputeFilter', 'ResourceFitFilter',
           'ServerGroupAntiAffinityFilter', 'ServerGroupAffinityFilter',
           'SameHostFilter', 'DifferentHostFilter']
WEIGHERS = ['RAMWeigher', 'CPUWeigher', 'ServerGroupSoftAffinityWeigher',
            'ServerGroupSoftAntiAffinityWeigher']


@pytest.fixture
def make_driver(conf, db):
    conf.set_override('enabled_filters', FILTERS, 'filter_scheduler')
    conf.set_override('enabled_weighers', WEIGHERS, 'filter_scheduler')

    def make(**multipliers):
        for option, value in multipliers.items():
            conf.set_override(option, value, 'filter_scheduler')
        return filter_scheduler.FilterScheduler(
            conf, db, HostStateCache(db), plugins.load_filters(conf),
            plugins.load_weighers(conf), rng=np.random.default_rng(0))
    return make


@pytest.fixture
def driver(make_driver):
    return make_driver()


def _hosts(db, *names):
    for name in names:
        fakes.report(db, name)


def _group(policy, uuid=GROUP, **rules):
    return objects.InstanceGroup(uuid=uuid, policy=policy, rules=rules)


def _select(driver, consumers, group=None, hints=None):
    spec = fakes.request_spec(num_instances=len(consumers),
                              instance_group=group,
                              scheduler_hints=hints or {})
    result = driver.select_destinations(CTXT, spec,
                                        instance_uuids=consumers)
    return [s[0].host for s in result]


def _claimed(db):
    """consumer -> host of its claims in the database."""
    return {a['consumer_uuid']: a['host']
            for a in claims.list_allocations(db)}


def test_anti_affinity_places_each_instance_on_its_own_host(db, driver):
    _hosts(db, 'h1', 'h2', 'h3', 'h4')
    placed = _select(driver, C[:3], _group('anti-affinity'))
    assert len(set(placed)) == 3
    assert _claimed(db) == dict(zip(C[:3], placed))
    assert db_groups.member_hosts(db, GROUP) == {h: 1 for h in placed}


def test_anti_affinity_without_enough_hosts_claims_nothing(db, driver):
    _hosts(db, 'h1', 'h2')
    with pytest.raises(exception.NoValidHost) as info:
        _select(driver, C[:3], _group('anti-affinity'))
    assert 'only 2 of 3 instances fit, none placed; server group %s ' \
        '(anti-affinity) rules out' % GROUP in info.value.reason
    assert claims.list_allocations(db) == []
    assert db_groups.member_hosts(db, GROUP) == {}
    # nothing held in memory either: a request that fits still fits
    assert len(set(_select(driver, C[3:5], _group('anti-affinity')))) == 2


def test_anti_affinity_within_a_request_needs_no_group_uuid(db, driver):
    _hosts(db, 'h1', 'h2', 'h3')
    placed = _select(driver, C[:3], _group('anti-affinity', uuid=None))
    assert sorted(placed) == ['h1', 'h2', 'h3']
    # no UUID: nothing to remember between requests
    assert db_groups.member_hosts(db, None) == {}


def test_affinity_places_every_instance_on_one_host(db, driver):
    # spreading weighers would use all three hosts without the group
    _hosts(db, 'h1', 'h2', 'h3')
    placed = _select(driver, C[:3], _group('affinity'))
    assert len(set(placed)) == 1
    assert db_groups.member_hosts(db, GROUP) == {placed[0]: 3}


def test_second_request_honours_anti_affinity_members(db, driver):
    _hosts(db, 'h1', 'h2', 'h3')
    first = _select(driver, C[:2], _group('anti-affinity'))
    [second] = _select(driver, C[2:3], _group('anti-affinity'))
    assert second not in first
    with pytest.raises(exception.NoValidHost) as info:
        _select(driver, C[3:4], _group('anti-affinity'))
    assert '3 removed by ServerGroupAntiAffinityFilter' in info.value.reason
    assert set(_claimed(db)) == set(C[:3])


def test_second_request_joins_the_affinity_host(db, driver):
    _hosts(db, 'h1', 'h2', 'h3')
    [first] = _select(driver, C[:1], _group('affinity'))
    assert _select(driver, C[1:3], _group('affinity')) == [first, first]
    # another group is free to go elsewhere
    other = _group('affinity', uuid=GROUP[:-1] + '0')
    assert _select(driver, C[3:6], other) != [first] * 3


def test_released_member_frees_its_host(db, driver):
    _hosts(db, 'h1', 'h2')
    placed = _select(driver, C[:2], _group('anti-affinity'))
    claims.delete_allocations(db, C[0])
    assert _select(driver, C[2:3], _group('anti-affinity')) == placed[:1]


def test_rescheduling_a_member_does_not_count_itself(db, driver):
    _hosts(db, 'h1', 'h2')
    _select(driver, C[:2], _group('anti-affinity'))
    # C[0] is scheduled again (a reschedule): its old place is not held
    # against it, and it cannot land on C[1]'s host
    [again] = _select(driver, C[:1], _group('anti-affinity'))
    assert again != _claimed(db)[C[1]]
    assert db_groups.member_hosts(db, GROUP) == {'h1': 1, 'h2': 1}


def test_a_member_moved_is_not_counted_against_itself(db, driver):
    # nova's resize of C[1] (allow_resize_to_same_host): the members are
    # reported on their hosts, and nova lists both hosts in the group; h2
    # holds C[1] only, which is the instance being moved
    _hosts(db, 'h1', 'h2')
    _report_instance(db, 'h1', C[0])
    _report_instance(db, 'h2', C[1])
    group = objects.InstanceGroup(uuid=GROUP, policy='anti-affinity',
                                  members=C[:2], hosts=['h1', 'h2'])
    assert _select(driver, C[1:2], group) == ['h2']
    # a new member still counts both
    group.members = C[:2]
    with pytest.raises(exception.NoValidHost):
        _select(driver, C[2:3], group)


def test_max_server_per_host(db, driver):
    _hosts(db, 'h1', 'h2')
    group = _group('anti-affinity', max_server_per_host='2')
    placed = _select(driver, C[:3], group)
    assert sorted(collections.Counter(placed).values()) == [1, 2]
    [fourth] = _select(driver, C[3:4], group)
    assert collections.Counter(placed + [fourth]) == {'h1': 2, 'h2': 2}
    with pytest.raises(exception.NoValidHost):
        _select(driver, C[4:5], group)


def test_bad_group_is_refused_at_the_edge(manager, db):
    # the driver takes the group as checked: the RPC edge refuses it
    # before SchedulerManager.select_destinations runs
    error = _edge_error(manager, fakes.request_spec(
        instance_group=_group('anti-affinity', max_server_per_host='0')))
    assert error.kwargs['field'].endswith('max_server_per_host')
    assert claims.list_allocations(db) == []


@pytest.fixture
def manager(conf, db):
    conf.set_override('enabled_filters', FILTERS, 'filter_scheduler')
    manager = composition.build_manager(conf, db)
    _hosts(db, 'h1')
    yield manager
    manager.stop()


def _edge_error(manager, spec):
    """The InvalidField a caller gets back for ``spec``, sent over the
    RPC edge to ``SchedulerManager.select_destinations``."""
    with pytest.raises(exception.InvalidField) as info:
        edge.send(manager, 'select_destinations', cast=False,
                  spec_obj=spec, instance_uuids=C[:1])
    return info.value


def _report_instance(db, host, uuid):
    db_instances.save_instances(db, host, [objects.InstanceInfo(
        uuid=uuid, host=host, node=host)])


@pytest.mark.parametrize('hint, expected', [
    ('same_host', {'h2'}),
    ('different_host', {'h1', 'h3'}),
])
def test_hints_use_reported_instances(db, driver, hint, expected):
    _hosts(db, 'h1', 'h2', 'h3')
    _report_instance(db, 'h2', C[10])
    placed = {_select(driver, [c], hints={hint: [C[10]]})[0]
              for c in C[:4]}
    assert placed <= expected
    if hint == 'different_host':
        assert placed == expected  # it spreads over what is left


@pytest.mark.parametrize('hint', ['same_host', 'different_host'])
def test_hints_use_claims_not_yet_reported(db, driver, hint):
    _hosts(db, 'h1', 'h2')
    [first] = _select(driver, C[:1])
    [second] = _select(driver, C[1:2], hints={hint: [C[0]]})
    assert (second == first) == (hint == 'same_host')


def test_same_host_of_unknown_instances_finds_nothing(db, driver):
    _hosts(db, 'h1', 'h2')
    with pytest.raises(exception.NoValidHost) as info:
        _select(driver, C[:1], hints={'same_host': [C[11]]})
    assert 'SameHostFilter' in info.value.reason
    assert _select(driver, C[:1], hints={'different_host': [C[11]]})


@pytest.mark.parametrize('hint', ['same_host', 'different_host'])
def test_hint_that_is_not_a_uuid_is_refused_at_the_edge(manager, db, hint):
    # the driver (and the filters' preload hooks) take the hints as
    # checked: the RPC edge refuses a value that is not an instance UUID
    error = _edge_error(manager, fakes.request_spec(
        scheduler_hints={hint: ['web-1']}))
    assert 'scheduler_hints.' + hint in error.kwargs['field']
    assert claims.list_allocations(db) == []


def test_soft_anti_affinity_spreads_against_packing_weighers(db,
                                                             make_driver):
    _hosts(db, 'h1', 'h2', 'h3')
    packing = {'ram_weight_multiplier': -1.0, 'cpu_weight_multiplier': -1.0}
    driver = make_driver(soft_anti_affinity_weight_multiplier=5.0,
                         **packing)
    placed = _select(driver, C[:3], _group('soft-anti-affinity'))
    assert sorted(placed) == ['h1', 'h2', 'h3']
    # a preference, not a rule: more members than hosts still fit
    more = _select(driver, C[3:5], _group('soft-anti-affinity'))
    assert len(set(more)) == 2
    # without the group, the same weighers pack
    assert len(set(_select(driver, C[5:8]))) == 1


def test_soft_affinity_packs_against_spreading_weighers(db, make_driver):
    _hosts(db, 'h1', 'h2', 'h3')
    driver = make_driver(soft_affinity_weight_multiplier=5.0)
    placed = _select(driver, C[:3], _group('soft-affinity'))
    assert len(set(placed)) == 1
    assert db_groups.member_hosts(db, GROUP) == {}  # soft: not recorded


def test_soft_group_members_come_from_the_caller(db, make_driver):
    # soft members are not recorded by claims; the caller lists the hosts
    # of earlier members, as nova's conductor does
    _hosts(db, 'h1', 'h2', 'h3')
    driver = make_driver(soft_anti_affinity_weight_multiplier=5.0,
                         ram_weight_multiplier=-1.0,
                         cpu_weight_multiplier=-1.0)
    group = _group('soft-anti-affinity')
    group.hosts = ['h1', 'h2']
    # packing alone would pick the fuller h1 or h2
    for host in ('h1', 'h2'):
        fakes.report(db, host, memory_mb_used=8000, vcpus_used=4)
    assert _select(driver, C[:1], group) == ['h3']
    assert _select(driver, C[1:2]) in (['h1'], ['h2'])


@pytest.mark.parametrize('policy', ['affinity', 'anti-affinity'])
def test_hard_policy_holds_without_the_group_filters(conf, db, policy):
    # the driver applies the policy to every instance it places, and the
    # claim re-checks it: the filters only explain what they removed
    conf.set_override('enabled_filters', ['ResourceFitFilter'],
                      'filter_scheduler')
    conf.set_override('enabled_weighers', ['RAMWeigher'],
                      'filter_scheduler')
    driver = filter_scheduler.FilterScheduler(
        conf, db, HostStateCache(db), plugins.load_filters(conf),
        plugins.load_weighers(conf), rng=np.random.default_rng(0))
    _hosts(db, 'h1', 'h2', 'h3')
    placed = _select(driver, C[:3], _group(policy))
    if policy == 'affinity':
        assert len(set(placed)) == 1
        assert _select(driver, C[3:4], _group(policy)) == placed[:1]
    else:
        assert len(set(placed)) == 3
        with pytest.raises(exception.NoValidHost) as info:
            _select(driver, C[3:4], _group(policy))
        assert 'server group %s (anti-affinity) rules out the 3 ' \
            'host(s) that fit' % GROUP in info.value.reason


# nova counts, per host, the group's members among the host's instances
MEMBERS_CASES = [
    # (members reported on h1, on h2, max_server_per_host, hosts allowed)
    (2, 1, '2', ['h2', 'h3']),
    (1, 1, '2', ['h1', 'h2', 'h3']),
    (3, 0, '3', ['h2', 'h3']),
    (0, 0, '1', ['h1', 'h2', 'h3']),
]


@pytest.mark.parametrize('on_h1, on_h2, limit, allowed', MEMBERS_CASES)
def test_anti_affinity_counts_members_trackers_report(
        db, driver, on_h1, on_h2, limit, allowed):
    _hosts(db, 'h1', 'h2', 'h3')
    members = []
    for host, count, offset in (('h1', on_h1, 0), ('h2', on_h2, 4)):
        uuids = C[offset:offset + count]
        members += uuids
        db_instances.save_instances(db, host, [
            objects.InstanceInfo(uuid=u) for u in uuids])
    group = _group('anti-affinity', uuid=None, max_server_per_host=limit)
    # the caller lists each member host once, as nova's group.hosts does
    group.members = members
    group.hosts = sorted({h for h, n in (('h1', on_h1), ('h2', on_h2))
                          if n})
    placed = set()
    for consumer in C[8:12]:
        try:
            placed |= set(_select(driver, [consumer], group))
        except exception.NoValidHost:
            break
    assert sorted(placed) == allowed


def _big_ram_and_many_cpu(db):
    """Issue 20's cloud: the RAM weigher prefers big-ram, which holds
    only two 2-vCPU instances; many-cpu holds many."""
    fakes.report(db, 'big-ram', vcpus=4, memory_mb=256 * 1024,
                 cpu_allocation_ratio=1.0)
    fakes.report(db, 'many-cpu', vcpus=32, memory_mb=64 * 1024)


def test_affinity_gang_goes_to_the_host_that_holds_it_all(db, driver):
    _big_ram_and_many_cpu(db)
    spec = fakes.request_spec(vcpus=2, num_instances=3,
                              instance_group=_group('affinity'))
    result = driver.select_destinations(CTXT, spec, instance_uuids=C[:3])
    assert [s[0].host for s in result] == ['many-cpu'] * 3
    assert db_groups.member_hosts(db, GROUP) == {'many-cpu': 3}


def test_affinity_gang_no_host_can_hold_says_so(db, driver):
    _hosts(db, 'h1', 'h2')  # 8 vCPUs x 4.0 each
    spec = fakes.request_spec(vcpus=8, num_instances=5,
                              instance_group=_group('affinity'))
    with pytest.raises(exception.NoValidHost) as info:
        driver.select_destinations(CTXT, spec, instance_uuids=C[:5])
    assert 'server group %s (affinity): none of the 2 host(s) that fit ' \
        'holds all 5 instances' % GROUP in info.value.reason
    assert claims.list_allocations(db) == []
