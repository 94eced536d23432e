"""ServerGroupAffinityFilter and ServerGroupAntiAffinityFilter over the
server group the driver loads into the request (``request.group``, a
GroupPlacement); SameHostFilter and DifferentHostFilter over what their
own preload hooks read from a store (the driver's ``plugins.preload``)."""

import pytest

from scheduler.driver import plugins
from scheduler.driver.server_groups import GroupPlacement
from scheduler.filters import affinity
from scheduler.filters import server_groups
from tests.unit import fakes
from tests.unit.filters import hosts

# two nodes on h1: host-level policies apply to both
TABLE = hosts.table(dict(host='h1'), dict(host='h1'), dict(host='h2'),
                    dict(host='h3'))
ALL = ['h1', 'h1', 'h2', 'h3']
GROUP = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f'


def _request(policy=None, members=(), max_per_host=1):
    request = hosts.request()
    if policy is not None:
        request.group = GroupPlacement(GROUP, policy, members, max_per_host)
    return request


AFFINITY_CASES = [
    ('no group', None, [], ALL),
    ('group without members: any host', 'affinity', [], ALL),
    ('only the host the group uses', 'affinity', ['h2'], ['h2']),
    ('every node of that host', 'affinity', ['h1', 'h1'], ['h1', 'h1']),
    ('member on an unknown host: nothing', 'affinity', ['gone'], []),
    ('anti-affinity group is not its business', 'anti-affinity', ['h2'],
     ALL),
    ('soft-affinity is a preference, not a rule', 'soft-affinity', ['h2'],
     ALL),
]


@pytest.mark.parametrize('policy, members, expected',
                         [c[1:] for c in AFFINITY_CASES],
                         ids=[c[0] for c in AFFINITY_CASES])
def test_affinity(conf, policy, members, expected):
    plugin = server_groups.ServerGroupAffinityFilter(conf)
    assert plugin.vectorized
    assert hosts.passing(plugin, TABLE, _request(policy, members)) == \
        expected


ANTI_AFFINITY_CASES = [
    ('no group', None, [], 1, ALL),
    ('group without members', 'anti-affinity', [], 1, ALL),
    ('hosts with a member are out', 'anti-affinity', ['h1', 'h3'], 1,
     ['h2']),
    ('every host used: nothing', 'anti-affinity', ['h1', 'h2', 'h3'], 1,
     []),
    ('max_server_per_host=2: one member leaves room', 'anti-affinity',
     ['h1', 'h3'], 2, ALL),
    ('max_server_per_host=2: two members fill a host', 'anti-affinity',
     ['h1', 'h1', 'h3'], 2, ['h2', 'h3']),
    ('affinity group is not its business', 'affinity', ['h1'], 1, ALL),
    ('soft-anti-affinity is a preference, not a rule',
     'soft-anti-affinity', ['h1', 'h2'], 1, ALL),
]


@pytest.mark.parametrize('policy, members, max_per_host, expected',
                         [c[1:] for c in ANTI_AFFINITY_CASES],
                         ids=[c[0] for c in ANTI_AFFINITY_CASES])
def test_anti_affinity(conf, policy, members, max_per_host, expected):
    plugin = server_groups.ServerGroupAntiAffinityFilter(conf)
    assert plugin.vectorized
    request = _request(policy, members, max_per_host)
    assert hosts.passing(plugin, TABLE, request) == expected


def test_members_placed_during_the_request_count(conf):
    plugin = server_groups.ServerGroupAntiAffinityFilter(conf)
    request = _request('anti-affinity', ['h1'])
    request.group.placed('h2')
    assert hosts.passing(plugin, TABLE, request) == ['h3']


def test_explanations_name_the_group(conf):
    request = _request('affinity', ['h2', 'h3'])
    detail = server_groups.ServerGroupAffinityFilter(conf).explain(
        TABLE, request, [0])
    assert GROUP in detail and 'h2, h3' in detail
    request = _request('anti-affinity', ['h1'], max_per_host=2)
    detail = server_groups.ServerGroupAntiAffinityFilter(conf).explain(
        TABLE, request, [0])
    assert GROUP in detail and '2 member' in detail


# instances -> their hosts, as the store knows them
U = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e%02d' % i for i in range(4)]
STORED = fakes.StoredData({U[0]: 'h1', U[1]: 'h3', U[2]: 'gone'})


def _passing_after_preload(plugin, hints):
    request = hosts.request(hints=hints)
    store = fakes.StoredData(STORED.instances)
    plugins.preload([plugin], request, store)
    return hosts.passing(plugin, TABLE, request), store.calls


SAME_HOST_CASES = [
    ('no hint', None, ALL),
    ('hosts of the instances', [U[0], U[1]], ['h1', 'h1', 'h3']),
    ('instances on no known host: nothing', [U[3]], []),
    ('instance on an unknown host: nothing', [U[2]], []),
]


@pytest.mark.parametrize('uuids, expected',
                         [c[1:] for c in SAME_HOST_CASES],
                         ids=[c[0] for c in SAME_HOST_CASES])
def test_same_host(conf, uuids, expected):
    plugin = affinity.SameHostFilter(conf)
    assert plugin.vectorized
    hints = {'same_host': uuids} if uuids is not None else {}
    passing, calls = _passing_after_preload(plugin, hints)
    assert passing == expected
    # one read, and only when the hint asks for it
    assert calls == ([('instance_hosts', uuids)] if uuids else [])


DIFFERENT_HOST_CASES = [
    ('no hint', None, ALL),
    ('instances on no known host: everything', [U[3]], ALL),
    ('hosts of the instances are out', [U[0], U[1]], ['h2']),
    ('instance on an unknown host', [U[2]], ALL),
]


@pytest.mark.parametrize('uuids, expected',
                         [c[1:] for c in DIFFERENT_HOST_CASES],
                         ids=[c[0] for c in DIFFERENT_HOST_CASES])
def test_different_host(conf, uuids, expected):
    plugin = affinity.DifferentHostFilter(conf)
    assert plugin.vectorized
    hints = {'different_host': uuids} if uuids is not None else {}
    passing, calls = _passing_after_preload(plugin, hints)
    assert passing == expected
    assert calls == ([('instance_hosts', uuids)] if uuids else [])


def test_each_filter_reads_only_its_own_hint(conf):
    same = affinity.SameHostFilter(conf)
    different = affinity.DifferentHostFilter(conf)
    request = hosts.request(hints={'same_host': [U[0]],
                                   'different_host': [U[1]]})
    plugins.preload([same, different], request, STORED)
    assert same.preloaded(request) == {'h1'}
    assert different.preloaded(request) == {'h3'}
    assert hosts.passing(same, TABLE, request) == ['h1', 'h1']
    assert hosts.passing(different, TABLE, request) == ['h1', 'h1', 'h2']
