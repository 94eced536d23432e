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


@dataclasses.dataclass
class Member:
    """One request of a window: its ranked candidate ``rows`` (table
    rows), their ``weights``, the instances that fit alone on each
    (``cap``), ``count`` instances of ``demand`` (resource class ->
    amount), ``affinity`` when all must share one host."""
    rows: np.ndarray
    weights: np.ndarray
    cap: np.ndarray
    count: int
    demand: dict
    affinity: bool = False


def solve_window(members, free, time_budget=0.03):
    """Requests of one window placed together (``solver_window``).

    ``free``: resource class -> free capacity per table row. Each
    member is placed whole (``z = 1``) or not at all; the objective is
    first the instances placed, then the weights (shifted per member to
    be non-negative, so that placing never costs), with a weight of one
    instance worth more than every weight difference together::

        maximize   M sum_i k_i z_i + sum_i sum_h (w_i[h] - min w_i) n_i[h]
        subject to sum_h n_i[h] = k_i z_i,   0 <= n_i[h] <= cap_i[h]
                   sum_i d_i[rc] n_i[h] <= free[rc][h]   (shared hosts)
                   affinity: n_i[h] = k_i y_i[h], sum_h y_i[h] = z_i

    Returns ``Solution``: ``counts`` is one array per member (over its
    ``rows``; all zero for a member left out)."""
    layout, offset = [], 0
    for member in members:
        layout.append(offset)
        offset += len(member.rows) * (2 if member.affinity else 1)
    z0 = offset
    size = z0 + len(members)
    objective, upper = np.zeros(size), np.ones(size)
    spread = sum(m.count * float(np.ptp(m.weights)) if len(m.weights)
                 else 0.0 for m in members)
    rows = []
    for i, member in enumerate(members):
        start, hosts = layout[i], len(member.rows)
        weights = np.asarray(member.weights, dtype=np.float64)
        if hosts:
            objective[start:start + hosts] = -(weights - weights.min())
        upper[start:start + hosts] = np.maximum(member.cap, 0)
        objective[z0 + i] = -(1.0 + spread) * member.count
        rows.append(_row({**dict.fromkeys(range(start, start + hosts), 1.0),
                          z0 + i: -member.count}, 0.0, 0.0))
        if member.affinity:
            ys = range(start + hosts, start + 2 * hosts)
            upper[start + hosts:start + 2 * hosts] = (
                np.asarray(member.cap) >= member.count)
            for j, y in enumerate(ys):
                rows.append(_row({start + j: 1.0, y: -member.count}, 0.0,
                                 0.0))
            rows.append(_row({**dict.fromkeys(ys, 1.0), z0 + i: -1.0},
                             0.0, 0.0))
    rows += _shared_capacity(members, layout, free)
    result = optimize.milp(
        objective, integrality=np.ones(size),
        bounds=optimize.Bounds(0, upper),
        constraints=optimize.LinearConstraint(
            _matrix([r[0] for r in rows], size),
            [r[1] for r in rows], [r[2] for r in rows]),
        options={'time_limit': time_budget, 'presolve': False})
    if result.status == 2:
        return Solution(INFEASIBLE)
    if result.status != 0:
        return Solution(TIMED_OUT)
    counts = [np.rint(result.x[start:start + len(m.rows)]).astype(np.int64)
              for start, m in zip(layout, members)]
    return Solution(OPTIMAL, counts)


def _row(entries, low, high):
    """One constraint: ``low <= sum entries[c] x[c] <= high``."""
    return entries, low, high


def _matrix(rows, size):
    """The rows' entries (column -> coefficient) as one sparse matrix."""
    index = [(i, c, v) for i, entries in enumerate(rows)
             for c, v in entries.items()]
    i, c, v = zip(*index) if index else ((), (), ())
    return sparse.csr_matrix((v, (i, c)), shape=(len(rows), size))


def _shared_capacity(members, layout, free):
    """One row per host two members or more may use, per resource
    class: the members' instances there within its free capacity (a
    member alone is held by its ``cap``)."""
    columns_of = {}
    for start, member in zip(layout, members):
        for j, row in enumerate(member.rows):
            columns_of.setdefault(int(row), []).append((start + j, member))
    rows = []
    for host, columns in columns_of.items():
        if len(columns) < 2:
            continue
        for rc in {rc for _, m in columns for rc in m.demand}:
            entries = {c: float(m.demand.get(rc, 0)) for c, m in columns
                       if m.demand.get(rc, 0)}
            if entries:
                rows.append(_row(entries, -np.inf, float(free[rc][host])))
    return rows
