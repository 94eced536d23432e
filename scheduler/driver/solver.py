"""SolverScheduler: the instances of a request placed at once, by a
mixed-integer program, then claimed as the filter scheduler claims.

``[scheduler] driver = solver``. The contract is ``FilterScheduler``'s,
inherited whole: ``select_destinations(ctxt, spec, instance_uuids,
return_alternates)`` answers one list of selections per instance, the
destination then its alternates; the same refresh, preload, filters,
assumed claims, claim transaction (``claims.claim_resources``, with its
SQL re-check of capacity and of the hard group policy), re-planning on a
claim conflict, NoValidHost diagnosis, decision log and recorder. Only the
placement step (``place_all``) differs, and only for a request whose
instances constrain each other: more than one instance, in a server group
(any policy). Other requests are placed greedily: with nothing coupling
its instances, a request's best placement is the greedy one.

For a coupled request, under the host-state lock as the greedy step:

1. the hosts past the filters where one instance fits and the group's
   hard policy allows one, ranked by the weighers (the filter scheduler's
   ranking), the best ``[solver] max_candidates`` kept;
2. per host, how many instances fit together (``copies_that_fit``, the fit
   rule) and, for anti-affinity, may join the group there;
3. ``solver_model.solve``: the counts per host that maximize the weights,
   less the soft policies' costs (``soft_affinity_weight_multiplier`` per
   host used, ``soft_anti_affinity_weight_multiplier`` per member beyond
   one on a host), within ``[solver] time_budget_ms``;
4. each instance assumed on its host, best host first; its alternates are
   picked among the ranked hosts as the greedy driver picks them.

When the model has no proven optimum within the budget, or none among
the hosts it was given, the request is placed by the greedy step over
every candidate instead: it may still succeed (a host left out of the
model), or answer the filter scheduler's structured NoValidHost. Either
is logged in one line; ``outcomes`` counts each request's path
(``solved``, ``timed_out``, ``infeasible``, ``greedy``).

With ``[solver] batch_window_ms`` > 0, the requests that reach the
worker within the window are first planned together
(``solver_window``, ``_plan_window``): each then follows its window's
hint if it still holds (``batched``), or is planned as above
(``hint_stale``, or no hint at all for a request the window left out).
Its claims are written by the same claim transaction, all or nothing
per request.
"""

import collections

import numpy as np
from oslo_log import log as logging
from oslo_utils import uuidutils

from scheduler.driver import filter_scheduler
from scheduler.driver import solver_model
from scheduler.driver import solver_window
from scheduler.driver.diagnosis import Diagnosis
from scheduler import exception
from scheduler.model import resource_groups
from scheduler.model.request_state import RequestState

LOG = logging.getLogger(__name__)

SOFT_COST_OPTIONS = {
    'soft-affinity': 'soft_affinity_weight_multiplier',
    'soft-anti-affinity': 'soft_anti_affinity_weight_multiplier',
}


class SolverScheduler(filter_scheduler.FilterScheduler):

    def __init__(self, conf, db, host_cache, filters, weighers, rng=None,
                 recorder=None):
        super().__init__(conf, db, host_cache, filters, weighers, rng=rng,
                         recorder=recorder)
        self.max_candidates = conf.solver.max_candidates
        self.time_budget = conf.solver.time_budget_ms / 1e3
        self.soft_costs = {policy: abs(getattr(conf.filter_scheduler,
                                               option))
                           for policy, option in SOFT_COST_OPTIONS.items()}
        # written under the host-state lock, as every planning step
        self.outcomes = collections.Counter()
        window = conf.solver.batch_window_ms / 1e3
        self.window = (solver_window.Window(window, self._plan_window)
                       if window > 0 else None)

    def _outcome(self, outcome):
        """Count a request's path, here and in the worker's metrics."""
        self.outcomes[outcome] += 1
        self.recorder.solver_outcome(outcome)

    def prepare(self, request, consumers):
        """The request waits for its window when ``[solver]
        batch_window_ms`` is set (``solver_window``), and keeps the joint
        plan the window made as its ``window_hint``."""
        if self.window is not None and _batchable(request.spec):
            request.window_hint = self.window.join(request.spec)

    def place_all(self, table, request, candidates, consumers,
                   return_alternates, plan, diagnosis, decision, key):
        hint, request.window_hint = request.window_hint, None
        if hint is not None:    # the first planning attempt only
            if decision.timed('weigh', self._follow, table, request,
                              candidates, consumers, hint,
                              return_alternates, plan, key):
                self._outcome('batched')
                return
            self._outcome('hint_stale')
        if len(consumers) < 2 or request.group is None:
            self._outcome('greedy')
            return super().place_all(
                table, request, candidates, consumers, return_alternates,
                plan, diagnosis, decision, key)
        placed = decision.timed('weigh', self._solve, table, request,
                                candidates, consumers, return_alternates,
                                plan, key)
        if not placed:
            super().place_all(table, request, candidates, consumers,
                               return_alternates, plan, diagnosis,
                               decision, key)

    def _solve(self, table, request, candidates, consumers,
               return_alternates, plan, key):
        """Place ``consumers`` as the model says; False (nothing placed)
        when it has no answer."""
        group = request.group
        rows = self._fitting(table, request, candidates, plan)
        rows = rows[group.allows(table, rows)] if len(rows) else rows
        if not len(rows):
            # the greedy step says why, with the diagnosis
            self._outcome(solver_model.INFEASIBLE)
            return False
        ranked, weights = self._rank(table, rows, request,
                                     self.max_candidates)
        cap = np.minimum(filter_scheduler.copies_that_fit(
            table, request.resources, ranked), len(consumers))
        members = table.per_host(group.hosts, ranked)
        if group.policy == 'anti-affinity':
            cap = np.minimum(cap, np.maximum(
                group.max_per_host - members, 0).astype(np.int64))
        solution = solver_model.solve(
            weights, cap, len(consumers), group.policy,
            self.soft_costs.get(group.policy, 0.0), members,
            self.time_budget)
        self._outcome(solution.status if solution.status !=
                      solver_model.OPTIMAL else 'solved')
        if solution.status != solver_model.OPTIMAL:
            LOG.info('Solver: %s for %d instances over %d of %d hosts '
                     '(budget %.0f ms); placing them greedily',
                     solution.status.replace('_', ' '), len(consumers),
                     len(ranked), len(candidates), self.time_budget * 1e3)
            return False
        pending = iter(consumers)
        for position in np.flatnonzero(solution.counts):
            for _ in range(int(solution.counts[position])):
                self._take(table, request, int(ranked[position]),
                           weights[position], next(pending), plan, key)
                if return_alternates:
                    self._alternates(table, request, ranked, weights, plan)
        return True

    def _alternates(self, table, request, ranked, weights, plan):
        """The greedy driver's alternates (``_add_alternates``), over
        the ranked hosts where one more instance fits now and the group
        allows it: the best few, found without a call per host."""
        keep = np.flatnonzero(
            filter_scheduler.copies_that_fit(table, request.resources,
                                             ranked) > 0)
        keep = keep[request.group.allows(table, ranked[keep])]
        keep = keep[:self.max_attempts + 1]
        self._add_alternates(table, request, ranked[keep], weights[keep],
                             plan)

    def _plan_window(self, specs):
        """One hint per request of a window (``solver_window``): the
        provider of each instance, or None for a request the window
        model left out or could not consider."""
        self.cache.refresh()
        requests = []
        for spec in specs:
            request = RequestState.from_spec(spec)
            self._preload(request, [uuidutils.generate_uuid()
                                    for _ in range(spec.num_instances)])
            requests.append((request, spec.num_instances))
        with self.cache.lock:
            table = self.cache.table
            members = [self._member(table, request, count)
                       for request, count in requests]
            modelled = [m for m in members if m is not None]
            if len(modelled) < 2:
                return [None] * len(specs)
            free = {rc: table.free(rc).copy()
                    for rc in {rc for m in modelled for rc in m.demand}}
            # the budget of each request the window holds
            solution = solver_model.solve_window(
                modelled, free, self.time_budget * len(modelled))
            if solution.status != solver_model.OPTIMAL:
                LOG.info('Solver: window of %d requests %s (budget %.0f '
                         'ms); planning them one by one', len(specs),
                         solution.status.replace('_', ' '),
                         self.time_budget * 1e3 * len(modelled))
                return [None] * len(specs)
            counts = iter(solution.counts)
            hints = []
            for member in members:
                count = None if member is None else next(counts)
                hints.append(None if count is None or not count.sum() else
                             [int(table.provider_id[row]) for row, n in
                              zip(member.rows, count) for _ in range(n)])
            return hints

    def _member(self, table, request, count):
        """What the window model needs of one request (its ranked
        candidates, weights and caps), None when it has none."""
        try:
            candidates = self.filter(table, request,
                                      Diagnosis(table.size),
                                      filter_scheduler._compute_only(table))
        except exception.NoValidHost:
            return None
        group = request.group
        rows = candidates[filter_scheduler.copies_that_fit(
            table, request.resources, candidates) > 0]
        if group is not None and len(rows):
            rows = rows[group.allows(table, rows)]
        if not len(rows):
            return None
        ranked, weights = self._rank(table, rows, request,
                                     self.max_candidates)
        cap = np.minimum(filter_scheduler.copies_that_fit(
            table, request.resources, ranked), count)
        if group is not None and group.policy == 'anti-affinity':
            cap = np.minimum(cap, np.maximum(
                group.max_per_host - table.per_host(group.hosts, ranked),
                0).astype(np.int64))
        return solver_model.Member(
            ranked, weights, cap, count, dict(request.resources),
            affinity=group is not None and group.policy == 'affinity')

    def _follow(self, table, request, candidates, consumers, hint,
                return_alternates, plan, key):
        """Place ``consumers`` on the providers of ``hint`` (one each)
        if they still pass the filters, fit and the group allows them;
        False, nothing placed, if not."""
        rows = [table.row_of(provider) for provider in hint]
        if len(rows) != len(consumers) or None in rows:
            return False
        needed = collections.Counter(rows)
        hosts = np.array(sorted(needed), dtype=np.int64)
        wanted = np.array([needed[r] for r in hosts])
        if (not np.isin(hosts, candidates).all() or
                (filter_scheduler.copies_that_fit(
                    table, request.resources, hosts) < wanted).any()):
            return False
        group = request.group
        if group is not None and not _group_holds(group, table, hosts,
                                                  wanted):
            return False
        ranked = weights = None
        if return_alternates:
            fitting = self._fitting(table, request, candidates, plan)
            if group is not None:
                fitting = fitting[group.allows(table, fitting)]
            ranked, weights = self._rank(table, fitting, request,
                                         self.max_attempts + len(hosts))
        own = dict(zip(hosts.tolist(), self.weigh(table, hosts, request)))
        for row, consumer in zip(rows, consumers):
            self._take(table, request, row, own[row], consumer, plan, key)
            if return_alternates:
                self._add_alternates(table, request, ranked, weights, plan)
        return True


def _group_holds(group, table, hosts, wanted):
    """Does the hard policy of ``group`` allow ``wanted`` more members
    on each of ``hosts``?"""
    if not group.allows(table, hosts).all():
        return False
    if group.policy == 'affinity':
        return len(hosts) == 1
    if group.policy == 'anti-affinity':
        return bool((table.per_host(group.hosts, hosts) + wanted
                     <= group.max_per_host).all())
    return True


def _batchable(spec):
    """A request a window may plan: compute only, no soft policy (its
    costs are the per-request model's)."""
    if resource_groups.has_groups(spec):
        return False
    group = spec.get('instance_group')
    return group is None or group.get('policy') in (
        None, 'affinity', 'anti-affinity')
