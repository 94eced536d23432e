"""The solver driver's model: how many instances of a request go to
each candidate host, as a mixed-integer program solved by HiGHS
(``scipy.optimize.milp``).

Pure: numbers in, numbers out; no table, database or lock. The instances
of one request are identical (one flavor), so the per-instance variables
``x[i, h]`` are summed into one integer ``n[h] = sum_i x[i, h]`` per
candidate host: the same solutions without the ``count!`` symmetric
copies of each, which a branch and bound would otherwise explore.

For ``count`` instances and hosts ``h`` (best first) with weight
``w[h]`` (the weighers' total, as the filter scheduler computes it) and
``cap[h]`` (instances that fit together: the fit rule per resource class,
and for anti-affinity ``max_server_per_host`` less the members there)::

    maximize   sum_h w[h] n[h] - cost * (sum_h y[h] | sum_h e[h])
    subject to sum_h n[h] = count,  0 <= n[h] <= cap[h], n integer
    affinity:       n[h] = count y[h],  sum_h y[h] = 1,  y binary, over
                    the hosts with cap[h] >= count only
    soft-affinity:  n[h] <= cap[h] y[h],  y binary   (cost per host used)
    soft-anti-affinity: n[h] - e[h] <= room[h], e >= 0  (cost per member
                    beyond the first on a host; ``room[h]`` is 1 on a
                    host without members, else 0)

``solve(...)`` returns a ``Solution``: ``status`` is ``'optimal'`` (and
``counts`` per host), ``'infeasible'`` (proven) or ``'timed_out'`` (no
proven optimum within the budget; HiGHS's other answers count as this).
"""

import dataclasses

import numpy as np
from scipy import optimize
from scipy import sparse

OPTIMAL, INFEASIBLE, TIMED_OUT = 'optimal', 'infeasible', 'timed_out'


@dataclasses.dataclass
class Solution:
    status: str
    counts: np.ndarray = None


def solve(weights, cap, count, policy=None, cost=0.0, members=None,
          time_budget=0.03):
    """The best placement of ``count`` instances (module docstring);
    ``members``: the group's members on each host (soft-anti-affinity),
    ``time_budget`` in seconds."""
    weights = np.asarray(weights, dtype=np.float64)
    cap = np.maximum(np.asarray(cap, dtype=np.float64), 0)
    hosts = len(weights)
    if not hosts or cap.sum() < count:
        return Solution(INFEASIBLE)
    if policy == 'affinity':
        return _one_host(weights, cap, count, time_budget)
    columns = _Columns(hosts)
    objective = [-weights]
    bounds = [cap]
    rows = [(sparse.csr_matrix(np.ones((1, hosts))), count, count)]
    if policy == 'soft-affinity':
        objective.append(np.full(hosts, cost))
        bounds.append(np.ones(hosts))
        rows.append((columns.pair(-sparse.diags(cap)), -np.inf, 0.0))
    elif policy == 'soft-anti-affinity':
        room = (np.zeros(hosts) if members is None
                else (np.asarray(members) <= 0).astype(np.float64))
        objective.append(np.full(hosts, cost))
        bounds.append(np.full(hosts, np.inf))
        rows.append((columns.pair(-sparse.identity(hosts)), -np.inf, room))
    return _solve(np.concatenate(objective), np.concatenate(bounds),
                  rows, len(objective) * hosts, hosts, time_budget)


def _one_host(weights, cap, count, time_budget):
    """Hard affinity: every instance on the one host chosen, so ``n[h] =
    count y[h]`` and only the hosts that hold them all take part."""
    able = np.flatnonzero(cap >= count)
    if not len(able):
        return Solution(INFEASIBLE)
    chosen = _solve(-weights[able] * count, np.ones(len(able)),
                    [(sparse.csr_matrix(np.ones((1, len(able)))), 1, 1)],
                    len(able), len(able), time_budget)
    if chosen.status != OPTIMAL:
        return chosen
    counts = np.zeros(len(weights), dtype=np.int64)
    counts[able] = chosen.counts * count
    return Solution(OPTIMAL, counts)


class _Columns:
    """Constraint blocks over ``n`` and one more variable per host."""

    def __init__(self, hosts):
        self.hosts = hosts

    def pair(self, second):
        """``n[h] + second[h] ...``: one row per host."""
        return sparse.hstack([sparse.identity(self.hosts), second])


def _solve(objective, upper, rows, size, hosts, time_budget):
    matrix = sparse.vstack([_width(r[0], size) for r in rows]).tocsr()
    lower = np.concatenate([np.broadcast_to(r[1], r[0].shape[0])
                            for r in rows])
    higher = np.concatenate([np.broadcast_to(r[2], r[0].shape[0])
                             for r in rows])
    result = optimize.milp(
        objective, integrality=np.ones(size),
        bounds=optimize.Bounds(0, upper),
        constraints=optimize.LinearConstraint(matrix, lower, higher),
        # HiGHS's presolve costs more than it saves on models this
        # small (about 8 of 12 ms for 200 hosts, measured)
        options={'time_limit': time_budget, 'presolve': False})
    if result.status == 0:
        return Solution(OPTIMAL, np.rint(result.x[:hosts]).astype(np.int64))
    if result.status == 2:
        return Solution(INFEASIBLE)
    return Solution(TIMED_OUT)


def _width(block, size):
    """``block`` padded with zero columns to ``size`` variables."""
    block = sparse.csr_matrix(block)
    if block.shape[1] == size:
        return block
    return sparse.hstack([block, sparse.csr_matrix(
        (block.shape[0], size - block.shape[1]))])
