"""SolverScheduler: the instances of a request placed at once, by a
mixed-integer program, then claimed as the filter scheduler claims.

``[scheduler] driver = solver``. The contract is ``FilterScheduler``'s,
inherited whole: ``select_destinations(ctxt, spec, instance_uuids,
return_alternates)`` answers one list of selections per instance, the
destination then its alternates; the same refresh, preload, filters,
assumed claims, claim transaction (``claims.claim_resources``, with its
SQL re-check of capacity and of the hard group policy), re-planning on a
claim conflict, NoValidHost diagnosis, decision log and recorder. Only the
placement step (``_place_all``) differs, and only for a request whose
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
"""

import collections

import numpy as np
from oslo_log import log as logging

from scheduler.driver import filter_scheduler
from scheduler.driver import solver_model

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

    def _outcome(self, outcome):
        """Count a request's path, here and in the worker's metrics."""
        self.outcomes[outcome] += 1
        self.recorder.solver_outcome(outcome)

    def _place_all(self, table, request, candidates, consumers,
                   return_alternates, plan, diagnosis, decision, key):
        if len(consumers) < 2 or request.group is None:
            self._outcome('greedy')
            return super()._place_all(
                table, request, candidates, consumers, return_alternates,
                plan, diagnosis, decision, key)
        placed = decision.timed('weigh', self._solve, table, request,
                                candidates, consumers, return_alternates,
                                plan, key)
        if not placed:
            super()._place_all(table, request, candidates, consumers,
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
