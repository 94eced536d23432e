"""FilterScheduler.top: the best rows, best first, ties shuffled; only
rows within the tie jitter of the wanted-th best are ranked."""

import numpy as np
import pytest

from scheduler.driver import filter_scheduler

J = filter_scheduler.TIE_JITTER

# (id, totals, wanted, the rows each rank may hold)
CASES = [
    ('one best', [0.1, 0.9, 0.5], 1, [{1}]),
    ('best first', [0.1, 0.9, 0.5, 0.7], 3, [{1}, {3}, {2}]),
    ('all wanted', [0.3, 0.1], 5, [{0}, {1}]),
    ('tie for first', [0.9, 0.2, 0.9], 1, [{0, 2}]),
    ('within the jitter is a tie', [0.5, 0.5 + J / 4, 0.1], 1, [{0, 1}]),
    ('beyond the jitter is not', [0.5, 0.5 + 2 * J, 0.1], 1, [{1}]),
    ('tie at the cut', [0.9, 0.4, 0.4, 0.4, 0.1], 2,
     [{0}, {1, 2, 3}]),
    ('many wanted (partition path)', list(np.arange(20) / 20.0), 10,
     [{19 - i} for i in range(10)]),
    ('all equal', [0.0] * 6, 2, [set(range(6))] * 2),
]


@pytest.mark.parametrize('totals, wanted, allowed',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_top(totals, wanted, allowed):
    seen = [set() for _ in allowed]
    for seed in range(60):
        driver = filter_scheduler.FilterScheduler.__new__(
            filter_scheduler.FilterScheduler)
        driver.rng = np.random.default_rng(seed)
        rows = np.arange(len(totals)) + 100
        total = np.array(totals, dtype=np.float64)
        top, weights = driver.top(rows, total.copy(), wanted)
        assert len(top) == len(allowed)
        assert list(weights) == sorted(weights, reverse=True)
        assert len(set(top.tolist())) == len(top)
        for rank, row in enumerate(top.tolist()):
            assert row - 100 in allowed[rank]
            seen[rank].add(row - 100)
    # the jitter does shuffle ties: every row tied for first gets its turn
    if len(allowed[0]) > 1:
        assert seen[0] == allowed[0]


def test_nan_weights_rank_last():
    driver = filter_scheduler.FilterScheduler.__new__(
        filter_scheduler.FilterScheduler)
    driver.rng = np.random.default_rng(0)
    top, _ = driver.top(np.arange(3), np.array([np.nan, 0.2, 0.7]), 2)
    assert top.tolist() == [2, 1]


# (id, totals, wanted, rows within the jitter of the wanted-th best)
DRAWS = [
    ('one best', [0.1, 0.9, 0.5], 1, [1]),
    ('tie for first', [0.9, 0.2, 0.9], 1, [0, 2]),
    ('tie at the cut', [0.9, 0.4, 0.4, 0.4, 0.1], 2, [0, 1, 2, 3]),
    ('NaN: every row', [np.nan, 0.2, 0.7], 2, [0, 1, 2]),
]


@pytest.mark.parametrize('totals, wanted, near', [d[1:] for d in DRAWS],
                         ids=[d[0] for d in DRAWS])
def test_one_draw_per_row_near_the_cut_and_no_other(totals, wanted, near):
    """The random stream is the product's (host_subset_size picks from
    it next): top draws one jitter per row within it of the wanted-th
    best, whatever the path, and the weights are the totals plus them."""
    driver = filter_scheduler.FilterScheduler.__new__(
        filter_scheduler.FilterScheduler)
    driver.rng = np.random.default_rng(11)
    reference = np.random.default_rng(11)
    total = np.array(totals, dtype=np.float64)
    top, weights = driver.top(np.arange(len(totals)), total, wanted)
    jittered = total[near] + reference.random(len(near)) * J
    assert driver.rng.bit_generator.state == reference.bit_generator.state
    # (no NaN among these tops: NaN ranks last)
    of_row = dict(zip(near, jittered.tolist()))
    assert weights.tolist() == [of_row[row] for row in top.tolist()]
