"""The ``fill`` bench's upper bound: the LP relaxation of a whole trace.

How many instances could *any* scheduler, online or offline, place out
of a finite trace of requests on a cluster? The integer program: each
request placed whole or not at all, its instances on hosts within their
capacity per resource class, hard affinity on one host, anti-affinity
at most ``max_server_per_host`` per host. Its linear relaxation is
solved by HiGHS (``scipy.optimize.milp`` without integrality, as the
solver driver's model uses it); its optimum, rounded down, bounds the
integer answer from above::

    maximize   sum_r k_r a_r                     (instances placed)
    subject to sum_h x[r, h] = k_r a_r,  0 <= a_r <= 1
               sum_r d_r[rc] x[r, h] <= free[h, rc]   per host and class
               x[r, h] <= m_r a_r       anti-affinity (max per host m_r)
               x[r, h] = 0              where one instance (affinity: the
                                        whole gang) never fits on h

Two aggregations keep it a few hundred variables whatever the trace
length and cluster size, and change no optimum of the relaxation:
requests of the same (flavor, count, policy, max per host) are one
class with ``a_c`` in ``[0, N_c]``; hosts of the same free capacity and
fit are one class of ``n_s`` hosts, with ``n_s`` times the capacity and
``x[c, s] <= m_c n_s a_c`` (an LP optimum can be spread evenly over
identical hosts: the average of its permutations is feasible and as
good).

    upper_bound(capacity, used, requests, fit_mask)   # -> int

``requests``: ``(resources, count, policy, max_per_host)`` tuples;
``fit_mask(resources)``: the hosts where one instance may go on the
empty cluster (zones, min/max unit), e.g. ``CapacityOracle.fit_mask``.
"""

import collections

import numpy as np
from scipy import optimize
from scipy import sparse


def upper_bound(capacity, used, requests, fit_mask):
    """The LP bound on instances placed (module docstring), an int."""
    classes = collections.Counter(
        (tuple(sorted(res.items())), count, policy,
         max_per_host if policy == 'anti-affinity' else None)
        for res, count, policy, max_per_host in requests)
    if not classes:
        return 0
    rcs = sorted(capacity)
    free = np.stack([np.asarray(capacity[rc], dtype=np.float64)
                     - np.asarray(used[rc], dtype=np.float64)
                     for rc in rcs], axis=1)
    keys = sorted(classes)
    copies = np.stack([_copies(free, rcs, dict(k[0]), fit_mask(dict(k[0])))
                       for k in keys], axis=1)
    # a host class: the same free capacity and the same copies per class
    _, first, sizes = np.unique(np.hstack([free, copies]), axis=0,
                                return_index=True, return_counts=True)
    return _solve(keys, classes, rcs, free[first], copies[first], sizes)


def _copies(free, rcs, resources, mask):
    """Instances of ``resources`` that fit together on each empty host."""
    count = np.where(mask, np.inf, 0.0)
    for i, rc in enumerate(rcs):
        amount = resources.get(rc, 0)
        if amount > 0:
            count = np.minimum(count, np.floor(free[:, i] / amount))
    return np.where(np.isinf(count), 0.0, count)


def _solve(keys, classes, rcs, free, copies, sizes):
    """The aggregated LP: columns ``a_c`` then ``x[c, s]``."""
    n_class, n_shape = len(keys), len(sizes)
    eligible = [(c, s) for c in range(n_class) for s in range(n_shape)
                if copies[s, c] >= (keys[c][1] if keys[c][2] == 'affinity'
                                    else 1)]
    size = n_class + len(eligible)
    objective = np.zeros(size)
    objective[:n_class] = [-k[1] for k in keys]
    upper = np.empty(size)
    upper[:n_class] = [classes[k] for k in keys]
    rows, cols, vals = [], [], []
    row_lo, row_hi = [], []

    def add_row(entries, low, high):
        for col, val in entries:
            rows.append(len(row_lo))
            cols.append(col)
            vals.append(val)
        row_lo.append(low)
        row_hi.append(high)

    by_class = collections.defaultdict(list)
    by_shape = collections.defaultdict(list)
    for j, (c, s) in enumerate(eligible, start=n_class):
        by_class[c].append(j)
        by_shape[s].append((j, c))
        # no more instances on a host class than fit on its hosts
        upper[j] = copies[s, c] * sizes[s]
        if keys[c][2] == 'anti-affinity':
            add_row([(j, 1.0), (c, -keys[c][3] * sizes[s])], -np.inf, 0.0)
    for c in range(n_class):
        add_row([(j, 1.0) for j in by_class[c]] + [(c, -keys[c][1])],
                0.0, 0.0)
    for s in range(n_shape):
        for i, rc in enumerate(rcs):
            entries = [(j, dict(keys[c][0]).get(rc, 0))
                       for j, c in by_shape[s]]
            entries = [e for e in entries if e[1]]
            if entries:
                add_row(entries, -np.inf, free[s, i] * sizes[s])
    matrix = sparse.csr_matrix((vals, (rows, cols)),
                               shape=(len(row_lo), size))
    # milp without integrality: the relaxation, by HiGHS's LP solver
    result = optimize.milp(objective, bounds=optimize.Bounds(0, upper),
                           constraints=optimize.LinearConstraint(
                               matrix, row_lo, row_hi))
    if result.status != 0:
        raise RuntimeError('LP bound not solved: %s' % result.message)
    # the optimum rounded down, with room for the solver's tolerance
    return int(np.floor(-result.fun + 1e-6))
