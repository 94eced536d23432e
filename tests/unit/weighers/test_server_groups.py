"""ServerGroupSoftAffinityWeigher and ServerGroupSoftAntiAffinityWeigher:
the members of the request's soft group on each host, as a preference."""

import pytest

from scheduler.driver.server_groups import GroupPlacement
from scheduler.weighers import server_groups
from tests.unit.filters import hosts

TABLE = hosts.table(dict(host='h1'), dict(host='h2'), dict(host='h3'))
GROUP = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f'
MEMBERS = ['h1', 'h1', 'h3']

AFFINITY = server_groups.ServerGroupSoftAffinityWeigher
ANTI = server_groups.ServerGroupSoftAntiAffinityWeigher

CASES = [
    # (id, weigher, group policy or None, raw weights h1..h3)
    ('soft-affinity: members weigh up', AFFINITY, 'soft-affinity',
     [2.0, 0.0, 1.0]),
    ('soft-anti-affinity: members weigh down', ANTI, 'soft-anti-affinity',
     [-2.0, 0.0, -1.0]),
    ('no group', AFFINITY, None, [0.0, 0.0, 0.0]),
    ('no group', ANTI, None, [0.0, 0.0, 0.0]),
    ('other policy: equal weights', AFFINITY, 'soft-anti-affinity',
     [0.0, 0.0, 0.0]),
    ('other policy: equal weights', ANTI, 'affinity', [0.0, 0.0, 0.0]),
]


@pytest.mark.parametrize('weigher_class, policy, expected',
                         [c[1:] for c in CASES],
                         ids=['%s-%s' % (c[1].__name__, c[0])
                              for c in CASES])
def test_raw_weights(conf, weigher_class, policy, expected):
    request = hosts.request()
    if policy:
        request.group = GroupPlacement(GROUP, policy, MEMBERS)
    assert hosts.weights(weigher_class(conf), TABLE, request) == {
        'h1': expected[0], 'h2': expected[1], 'h3': expected[2]}


def test_members_placed_earlier_in_the_request_count(conf):
    request = hosts.request()
    request.group = GroupPlacement(GROUP, 'soft-anti-affinity', [])
    weigher = ANTI(conf)
    assert set(hosts.weights(weigher, TABLE, request).values()) == {0.0}
    request.group.placed('h2')
    assert hosts.weights(weigher, TABLE, request)['h2'] == -1.0


@pytest.mark.parametrize('weigher_class, option', [
    (AFFINITY, 'soft_affinity_weight_multiplier'),
    (ANTI, 'soft_anti_affinity_weight_multiplier'),
])
def test_multiplier_comes_from_its_option(conf, weigher_class, option):
    conf.set_override(option, 3.5, 'filter_scheduler')
    assert weigher_class(conf).multiplier == 3.5
