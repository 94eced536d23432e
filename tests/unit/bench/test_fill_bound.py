"""The fill bench's LP bound (``scheduler_bench.fill_bound``) on traces
small enough to count by hand."""

import numpy as np
import pytest

from scheduler_bench import fill_bound
from scheduler_bench.oracle import CapacityOracle

BIG, SMALL = {'R': 8}, {'R': 4}


def _bound(free, requests):
    capacity = {'R': np.asarray(free)}
    used = {'R': np.zeros(len(free), dtype=np.int64)}
    oracle = CapacityOracle(capacity, used)
    return fill_bound.upper_bound(capacity, used, requests, oracle.fit_mask)


@pytest.mark.parametrize('free, requests, bound', [
    # the small ones before the big one: 4 instances, not 1 + 2
    ([8, 8], [(BIG, 1, None, 1)] + [(SMALL, 1, None, 1)] * 4, 4),
    # a gang of 3, at most 1 per host, on 2 hosts: none
    ([8, 8], [(SMALL, 3, 'anti-affinity', 1)], 0),
    # ... at most 2 per host: all 3
    ([8, 8], [(SMALL, 3, 'anti-affinity', 2)], 3),
    # affinity: only hosts that hold the whole gang
    ([8, 4], [(SMALL, 3, 'affinity', 1)], 0),
    ([12, 4], [(SMALL, 3, 'affinity', 1), (SMALL, 1, None, 1)], 4),
    # fractional requests are allowed: 20 units, gangs of 2 x 8 units
    ([8, 8, 4], [(BIG, 2, None, 1)] * 2, 2),
    ([], [], 0),
])
def test_bound(free, requests, bound):
    assert _bound(free, requests) == bound


def test_identical_hosts_give_the_bound_of_one_host_times_their_number():
    requests = [(SMALL, 2, 'anti-affinity', 1)] * 50 + \
        [(BIG, 1, None, 1)] * 50
    one = _bound([16], requests)
    assert _bound([16] * 10, requests) >= 10 * one - 10
    assert _bound([16] * 10, requests) <= 10 * 16 // 4
