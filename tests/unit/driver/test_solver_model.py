"""The solver driver's model alone: counts per host from weights,
capacities and the group's policy."""

import numpy as np
import pytest

from scheduler.driver import solver_model

CASES = [
    # (weights, cap, count, policy, cost, members, counts)
    ([1.0, 0.5], [1, 3], 3, 'affinity', 0.0, None, [0, 3]),
    ([1.0, 0.5, 0.2], [2, 2, 2], 3, 'anti-affinity', 0.0, None,
     [2, 1, 0]),
    ([1.0, 0.9, 0.8], [3, 3, 3], 3, 'soft-anti-affinity', 1.0, [0, 0, 0],
     [1, 1, 1]),
    # a member on h3 already: one more there costs as much as a
    # second one on h1, which weighs more
    ([1.0, 0.9, 0.8], [3, 3, 3], 3, 'soft-anti-affinity', 0.3, [0, 0, 1],
     [2, 1, 0]),
    # cheap enough, all go to the best host
    ([1.0, 0.9, 0.8], [3, 3, 3], 3, 'soft-anti-affinity', 0.05, [0, 0, 1],
     [3, 0, 0]),
    ([1.0, 0.9, 0.8], [2, 2, 3], 3, 'soft-affinity', 1.0, None,
     [0, 0, 3]),
    ([1.0, 0.9, 0.8], [2, 2, 3], 3, 'soft-affinity', 0.0, None,
     [2, 1, 0]),
]


@pytest.mark.parametrize('weights, cap, count, policy, cost, members, '
                         'counts', CASES)
def test_best_counts(weights, cap, count, policy, cost, members, counts):
    solution = solver_model.solve(weights, cap, count, policy, cost,
                                  members, time_budget=5.0)
    assert solution.status == solver_model.OPTIMAL
    assert solution.counts.tolist() == counts


@pytest.mark.parametrize('cap, count, policy', [
    ([2, 2], 3, 'affinity'),
    ([1, 1], 3, 'anti-affinity'),
    ([], 1, 'affinity'),
])
def test_proven_infeasible(cap, count, policy):
    solution = solver_model.solve(np.ones(len(cap)), cap, count, policy,
                                  time_budget=5.0)
    assert solution.status == solver_model.INFEASIBLE
    assert solution.counts is None
