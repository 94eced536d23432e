"""GroupPlacement: a request's server group while it is placed; built from
the members the database knows plus the hosts the caller lists. A bad
policy or rule never reaches it: the RPC edge refuses the request."""

import pytest

from scheduler.db import claims
from scheduler import exception
from scheduler import objects
from scheduler.driver.server_groups import GroupPlacement
from tests.unit.filters import hosts
from tests.unit.edge import test_schemas

GROUP = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f'
TABLE = hosts.table(dict(host='h1'), dict(host='h2'), dict(host='h3'))
ROWS = [0, 1, 2]


def _spec(group):
    return objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=1),
                               instance_group=group)


def _group(**fields):
    return objects.InstanceGroup(**dict({'uuid': GROUP}, **fields))


@pytest.mark.parametrize('policy', [None, '', 'affinity ', 'Affinity',
                                    'anti_affinity', 'spread'])
def test_unknown_policy_is_refused_at_the_edge(policy):
    with pytest.raises(exception.InvalidField) as info:
        test_schemas.check('select_destinations', spec_obj=_spec(
            _group(policy=policy)))
    assert info.value.kwargs['field'] == 'spec_obj.instance_group.policy'
    assert 'soft-anti-affinity' in str(info.value)
    assert repr(policy) in str(info.value)


@pytest.mark.parametrize('value', ['0', '-1', 'two', '1.5', ''])
def test_bad_max_server_per_host_is_refused_at_the_edge(value):
    group = _group(policy='anti-affinity',
                   rules={'max_server_per_host': value})
    with pytest.raises(exception.InvalidField) as info:
        test_schemas.check('select_destinations', spec_obj=_spec(group))
    assert info.value.kwargs['field'] == \
        'spec_obj.instance_group.rules.max_server_per_host'
    assert repr(value) in str(info.value)


def test_members_from_the_database_and_the_caller():
    group = _group(policy='anti-affinity', hosts=['h2', 'h3'],
                   rules={'max_server_per_host': '3'})
    placement = GroupPlacement.from_group(group, {'h1': 1, 'h2': 2})
    assert placement.uuid == GROUP
    assert placement.max_per_host == 3
    # a host the caller lists counts once unless the database knows more
    assert placement.hosts == {'h1': 1, 'h2': 2, 'h3': 1}
    assert placement.is_hard


def test_defaults():
    placement = GroupPlacement.from_group(_group(policy='soft-affinity'),
                                          {})
    assert placement.max_per_host == 1
    assert not placement.hosts
    assert not placement.is_hard


ALLOWS_CASES = [
    ('affinity without members', 'affinity', [], 1, [True] * 3),
    ('affinity with a member', 'affinity', ['h2'], 1,
     [False, True, False]),
    ('anti-affinity', 'anti-affinity', ['h1', 'h3'], 1,
     [False, True, False]),
    ('anti-affinity, two per host', 'anti-affinity', ['h1', 'h1', 'h3'], 2,
     [False, True, True]),
    ('soft-affinity allows all', 'soft-affinity', ['h2'], 1, [True] * 3),
    ('soft-anti-affinity allows all', 'soft-anti-affinity', ['h1', 'h2'], 1,
     [True] * 3),
]


@pytest.mark.parametrize('policy, members, max_per_host, expected',
                         [c[1:] for c in ALLOWS_CASES],
                         ids=[c[0] for c in ALLOWS_CASES])
def test_allows(policy, members, max_per_host, expected):
    placement = GroupPlacement(GROUP, policy, members, max_per_host)
    assert placement.allows(TABLE, ROWS).tolist() == expected
    # only the rows asked about, in their order
    assert placement.allows(TABLE, [2, 0]).tolist() == \
        [expected[2], expected[0]]


def test_placed_members_narrow_what_is_allowed():
    affine = GroupPlacement(GROUP, 'affinity', [])
    affine.placed('h3')
    assert affine.allows(TABLE, ROWS).tolist() == [False, False, True]
    anti = GroupPlacement(GROUP, 'anti-affinity', [], max_per_host=2)
    anti.placed('h1')
    assert anti.allows(TABLE, ROWS).tolist() == [True, True, True]
    anti.placed('h1')
    assert anti.allows(TABLE, ROWS).tolist() == [False, True, True]
    assert anti.hosts['h1'] == 2


@pytest.mark.parametrize('policy, uuid, max_per_host, expected', [
    ('affinity', GROUP, 1, claims.GroupPolicy(GROUP, 'affinity', 1)),
    ('anti-affinity', GROUP, 2,
     claims.GroupPolicy(GROUP, 'anti-affinity', 2)),
    ('soft-affinity', GROUP, 1, None),
    ('soft-anti-affinity', GROUP, 1, None),
    # without a UUID there is no row to lock, nor members to remember
    ('anti-affinity', None, 1, None),
])
def test_claim_policy(policy, uuid, max_per_host, expected):
    placement = GroupPlacement(uuid, policy, [], max_per_host)
    assert placement.claim_policy() == expected
