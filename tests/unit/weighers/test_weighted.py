"""BaseWeigher.weighted() of the built-in weighers: exactly (the same
floats) the multipliers times the normalized raw weights, or None when
those add nothing; a weigher that knows its weights are all equal
(``uniform``) says so without weighing the candidates."""

import numpy as np
import pytest

from scheduler.driver.server_groups import GroupPlacement
from scheduler.weighers import base
from scheduler.weighers import build_failure
from scheduler.weighers import resources
from scheduler.weighers import server_groups
from tests.unit.filters import hosts

GROUP = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f'
AFFINITY = server_groups.ServerGroupSoftAffinityWeigher
ANTI = server_groups.ServerGroupSoftAntiAffinityWeigher
BUILD = build_failure.BuildFailureWeigher


def _table(failed=()):
    """Four hosts of different usage; ``failed``: failed builds of
    h1..h4 (none by default)."""
    table = hosts.table(*(dict(host='h%d' % i, vcpus_used=i,
                               memory_mb_used=1000 * i,
                               local_gb_used=10 * i) for i in range(1, 5)))
    for row, count in enumerate(failed):
        table.failed_builds[row] = count
    return table


def _request(policy=None):
    request = hosts.request()
    if policy:
        request.group = GroupPlacement(GROUP, policy, ['h1', 'h1', 'h3'])
    return request


# (id, weigher class, request's group policy, failed builds, uniform)
CASES = [
    ('RAM', resources.RAMWeigher, None, (), False),
    ('CPU', resources.CPUWeigher, None, (), False),
    ('disk', resources.DiskWeigher, None, (), False),
    ('soft affinity, no group', AFFINITY, None, (), True),
    ('soft affinity, other policy', AFFINITY, 'soft-anti-affinity', (),
     True),
    ('soft affinity, its group', AFFINITY, 'soft-affinity', (), False),
    ('soft anti-affinity, no group', ANTI, None, (), True),
    ('soft anti-affinity, its group', ANTI, 'soft-anti-affinity', (),
     False),
    ('build failures, none anywhere', BUILD, None, (), True),
    ('build failures on some hosts', BUILD, None, (0, 2, 0, 1), False),
]


def _reference(weigher, table, rows, request):
    """What weighted() stands for, computed the long way."""
    return weigher.multipliers(table, rows) * base.normalize(
        weigher.weigh_all(table, rows, request))


@pytest.mark.parametrize('weigher_class, policy, failed, uniform',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize('rows', [[0, 1, 2, 3], [3, 1], [2]],
                         ids=['all rows', 'some rows', 'one row'])
def test_weighted_is_the_reference_to_the_last_bit(
        conf, weigher_class, policy, failed, uniform, rows):
    table, request = _table(failed), _request(policy)
    weigher = weigher_class(conf)
    rows = np.array(rows)
    assert weigher.uniform(table, rows, request) is uniform
    expected = _reference(weigher, table, rows, request)
    result = weigher.weighted(table, rows, request)
    if result is None:
        assert not expected.any()   # it stands for adding zeros
    else:
        assert result.tobytes() == expected.tobytes()
    if uniform:
        assert result is None


def test_weighted_of_a_uniform_weigher_does_not_weigh(conf):
    class Uniform(base.BaseWeigher):
        weighed = 0

        def uniform(self, table, rows, request):
            return True

        def weigh_all(self, table, rows, request):
            self.weighed += 1
            return np.zeros(len(rows))

    weigher = Uniform(conf)
    assert weigher.weighted(_table(), np.arange(4), None) is None
    assert weigher.weighed == 0
    # an infinite multiplier still turns equal weights into NaN (as nova)
    weigher.multiplier = np.inf
    with np.errstate(invalid='ignore'):  # inf * 0
        result = weigher.weighted(_table(), np.arange(4), None)
    assert weigher.weighed == 1 and np.isnan(result).all()


def test_a_failed_build_anywhere_makes_the_weigher_weigh(conf):
    table = _table()
    weigher = BUILD(conf)
    rows = np.arange(table.size)
    assert weigher.uniform(table, rows, _request())
    # a report brings a failed build: the very next request sees it
    provider = hosts.provider(3, 'h3', vcpus_used=3, memory_mb_used=3000,
                              local_gb_used=30)
    provider['failed_builds'] = 2
    table.apply([provider])
    assert not weigher.uniform(table, rows, _request())
    # the failing host sinks below the others
    m = weigher.multiplier
    assert weigher.weighted(table, rows, _request()).tolist() == [
        m, m, 0.0, m]


def test_weighted_leaves_the_raw_weights_alone(conf):
    """weigh_all may return a column of the table itself: weighted()
    never scales it in place."""
    column = np.array([4.0, 1.0, 3.0])

    class Column(base.BaseWeigher):
        def weigh_all(self, table, rows, request):
            return column

    Column(conf).weighted(None, np.arange(3), None)
    assert column.tolist() == [4.0, 1.0, 3.0]
