"""FilterScheduler: filter and weigh in memory, then claim in the database.

Phase one (under the worker's host-state lock, no DB locks): refresh the
host table, run the requested-hosts step and the filters, then for each
instance weigh the hosts that still fit, pick at random among the best
``host_subset_size`` and count its claim tentatively in the table, so the
next instance of the request (or another thread of this worker) sees it.

Phase two: ``claims.claim_resources`` writes the claims of all instances in
one transaction. A ``ClaimConflict`` (another worker was faster) re-reads
the providers involved and plans again, up to ``[scheduler]
claim_retries`` times; then the request fails with ``NoValidHost``.

Tentative claims make a worker's view more pessimistic than the database
while they are in flight: one that loses its race is dropped again. So when
no host fits while other requests of this worker hold tentative claims,
the request waits until those are written or dropped, then plans again,
rather than answering a NoValidHost the database would not confirm.
"""

import dataclasses
import threading

import numpy as np
from oslo_log import log as logging
from oslo_utils import uuidutils

from scheduler import claims
from scheduler import exception
from scheduler import objects
from scheduler.driver.diagnosis import MAX_NAMES
from scheduler.driver.diagnosis import Diagnosis
from scheduler.db import groups as db_groups
from scheduler.db import instances as db_instances
from scheduler.driver.requested_hosts import requested_hosts_mask
from scheduler.driver.server_groups import GroupPlacement
from scheduler.request_state import RequestState
from scheduler.weighers.base import normalize

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class _Plan:
    selections: list
    claims: list
    rows: list


class _InFlight:
    """Requests of this worker whose tentative claims are in the table
    but not yet written to (or dropped from) the database."""

    WAIT = 10.0

    def __init__(self):
        self._tokens = set()
        self._changed = threading.Condition()

    def add(self, token):
        with self._changed:
            self._tokens.add(token)

    def done(self, token):
        with self._changed:
            self._tokens.discard(token)
            self._changed.notify_all()

    def snapshot(self):
        with self._changed:
            return frozenset(self._tokens)

    def wait(self, tokens):
        """Wait until none of ``tokens`` is in flight; False on timeout
        without any of them finishing."""
        with self._changed:
            self._changed.wait_for(lambda: not tokens & self._tokens,
                                   timeout=self.WAIT)
            return tokens - self._tokens != frozenset()


class FilterScheduler:

    def __init__(self, conf, db, host_cache, filters, weighers, rng=None):
        self.db = db
        self.cache = host_cache
        self.filters = filters
        self.weighers = weighers
        self.host_subset_size = conf.filter_scheduler.host_subset_size
        self.max_attempts = conf.scheduler.max_attempts
        self.claim_retries = conf.scheduler.claim_retries
        self.rng = rng or np.random.default_rng()
        self.claim_conflicts = 0
        self._in_flight = _InFlight()

    def select_destinations(self, ctxt, spec, instance_uuids=None,
                            return_alternates=False):
        """Claim a host for every instance; see the module docstring."""
        is_admin = bool(getattr(ctxt, 'is_admin_caller', False))
        request = RequestState.from_spec(spec, is_admin=is_admin)
        consumers = list(instance_uuids or spec.get('instance_uuids') or
                         [uuidutils.generate_uuid()
                          for _ in range(spec.num_instances)])
        conflicts = 0
        token = object()
        for attempt in range(self.claim_retries + 1):
            self.cache.refresh(force=attempt > 0)
            plan = self._plan_settled(request, consumers, return_alternates,
                                      conflicts, token)
            try:
                group = (request.group.claim_policy() if request.group
                         else None)
                claims.claim_resources(self.db, plan.claims, group=group)
                return plan.selections
            except exception.ClaimConflict as exc:
                conflicts += 1
                self.claim_conflicts += 1
                LOG.info('Claim conflict: %s; re-planning (attempt %d)',
                         exc, attempt + 1)
                self.cache.reload_providers(
                    {c.provider_id for c in plan.claims})
            except Exception:
                self.cache.reload_providers(
                    {c.provider_id for c in plan.claims})
                raise
            finally:
                self._in_flight.done(token)
        diagnosis = Diagnosis(self.cache.table.size)
        diagnosis.claim_conflicts = conflicts
        diagnosis.note = 'gave up after %d claim attempts' % (conflicts)
        raise exception.NoValidHost(
            reason=diagnosis.reason(), diagnosis=diagnosis.as_dict())

    def _preload(self, request, consumers):
        """Per-request data the filters need from the database, read once
        per planning attempt (filters themselves never touch it)."""
        group = request.spec.get('instance_group')
        if group is not None and group.get('policy'):
            placed = (db_groups.member_hosts(self.db, group.uuid,
                                             exclude_consumers=consumers)
                      if group.get('uuid') else {})
            reported = db_instances.count_by_host(
                self.db, group.get('members') or ())
            request.group = GroupPlacement.from_group(group, placed,
                                                      reported)
        hints = request.hints
        if 'same_host' in hints:
            request.same_hosts = db_instances.hosts_of(
                self.db, _uuids(hints['same_host'], 'same_host'))
        if 'different_host' in hints:
            request.different_hosts = db_instances.hosts_of(
                self.db, _uuids(hints['different_host'], 'different_host'))

    def _plan_settled(self, request, consumers, return_alternates,
                      conflicts, token):
        """Plan; on NoValidHost, wait for the tentative claims of other
        requests of this worker to settle and plan again (module doc)."""
        for _ in range(self.claim_retries):
            self._preload(request, consumers)
            try:
                return self._plan_locked(request, consumers,
                                         return_alternates, conflicts, token)
            except exception.NoValidHost as exc:
                others = getattr(exc, 'in_flight', None)
                if not others or not self._in_flight.wait(others):
                    raise
            self.cache.refresh(force=True)
        self._preload(request, consumers)
        return self._plan_locked(request, consumers, return_alternates,
                                 conflicts, token)

    def _plan_locked(self, request, consumers, return_alternates,
                     conflicts, token):
        with self.cache.lock:
            table = self.cache.table
            diagnosis = Diagnosis(table.size)
            diagnosis.claim_conflicts = conflicts
            plan = _Plan([], [], [])
            try:
                candidates = self._filter(table, request, diagnosis)
                for consumer in consumers:
                    self._place_one(table, request, candidates, consumer,
                                    return_alternates, plan, diagnosis,
                                    len(consumers))
            except exception.NoValidHost as exc:
                if plan.claims:  # forget this request's tentative claims
                    self.cache.reload_providers(
                        {c.provider_id for c in plan.claims})
                # whose tentative claims this answer may have counted
                exc.in_flight = self._in_flight.snapshot()
                raise
            self._in_flight.add(token)
            return plan

    def _filter(self, table, request, diagnosis):
        alive = requested_hosts_mask(table, request)
        removed = np.flatnonzero(~alive)
        diagnosis.add('RequestedHosts', table.size, len(removed),
                      _names(table, removed),
                      'force/ignore/retry/destination' if len(removed)
                      else None)
        for plugin in self.filters:
            rows = np.flatnonzero(alive)
            if not len(rows):
                break
            mask = plugin.mask_for(table, request, rows)
            out = rows[~mask[rows]]
            detail = (plugin.explain(table, request, out)
                      if len(out) else None)
            diagnosis.add(plugin.name, len(rows), len(out),
                          _names(table, out), detail)
            alive &= mask
        candidates = np.flatnonzero(alive)
        if not len(candidates):
            self._no_valid_host(request, diagnosis)
        return candidates

    def _no_valid_host(self, request, diagnosis, note=None):
        diagnosis.note = note
        raise exception.NoValidHost(
            reason=diagnosis.reason(show_hosts=request.is_admin),
            diagnosis=diagnosis.as_dict(show_hosts=request.is_admin))

    def _place_one(self, table, request, candidates, consumer,
                   return_alternates, plan, diagnosis, total):
        fitting = candidates[_fit_mask(table, candidates, request.resources)]
        fitting, group_note = _allowed_by_group(request, table, fitting)
        if not len(fitting):
            notes = ['only %d of %d instances fit, none placed' % (
                len(plan.claims), total)] if plan.claims else []
            notes += [group_note] if group_note else []
            self._no_valid_host(request, diagnosis,
                                note='; '.join(notes) or None)
        wanted = max(self.host_subset_size,
                     self.max_attempts if return_alternates else 1)
        ranked, weights = self._rank(table, fitting, request, wanted)
        pick = int(self.rng.integers(min(self.host_subset_size,
                                         len(ranked))))
        chosen = int(ranked[pick])
        table.add_claim(chosen, request.resources)
        if request.group is not None:
            request.group.placed(table.hosts[chosen])
        plan.claims.append(claims.Claim(
            consumer, int(table.provider_id[chosen]),
            dict(request.resources), host=table.hosts[chosen]))
        plan.rows.append(chosen)
        selections = [self._selection(table, chosen, consumer, request,
                                      False, weights[pick])]
        if return_alternates:
            for row, weight in zip(ranked, weights):
                if len(selections) >= self.max_attempts:
                    break
                row = int(row)
                if (row != chosen and table.fits(row, request.resources)
                        and _group_allows(request, table, row)):
                    selections.append(self._selection(
                        table, row, consumer, request, True, weight))
        plan.selections.append(selections)

    def _rank(self, table, rows, request, wanted):
        """The ``wanted`` best rows, best first, and their weights; ties
        in random order."""
        total = np.zeros(len(rows), dtype=np.float64)
        for weigher in self.weighers:
            raw = weigher.weigh_all(table, rows, request)
            total += weigher.multipliers(table, rows) * normalize(raw)
        # a jitter far below any real weight difference shuffles ties
        total += self.rng.random(len(rows)) * 1e-9
        wanted = min(wanted, len(rows))
        if wanted < len(rows):
            top = np.argpartition(-total, wanted - 1)[:wanted]
        else:
            top = np.arange(len(rows))
        top = top[np.argsort(-total[top], kind='stable')]
        return rows[top], total[top]

    @staticmethod
    def _selection(table, row, consumer, request, is_alternate, weight):
        limits = {rc: int(cols.capacity[row])
                  for rc, cols in table.resources.items()
                  if rc in request.resources}
        return objects.Selection(
            host=table.hosts[row], nodename=table.nodenames[row],
            compute_node_uuid=table.uuids[row], instance_uuid=consumer,
            allocation_id=None if is_alternate else consumer,
            allocation={} if is_alternate else dict(request.resources),
            limits=limits, weight=float(weight),
            is_alternate=is_alternate)


def _allowed_by_group(request, table, rows):
    """The rows the request's group policy allows, and why none if none
    (or the answer would read "3/3 hosts" and no more)."""
    if request.group is None or not len(rows):
        return rows, None
    allowed = rows[request.group.allows(table, rows)]
    if len(allowed):
        return allowed, None
    return allowed, 'server group %s (%s) rules out the %d host(s) that ' \
        'fit' % (request.group.uuid, request.group.policy, len(rows))


def _group_allows(request, table, row):
    return request.group is None or bool(
        request.group.allows(table, [row])[0])


def _uuids(values, hint):
    for value in values:
        if not uuidutils.is_uuid_like(value):
            raise exception.InvalidField(
                field='spec_obj.scheduler_hints.%s' % hint,
                reason='not an instance UUID: %r' % (value,))
    return values


def _names(table, rows):
    """Host names of the first rows, as many as a diagnosis keeps."""
    return [table.hosts[int(r)] for r in rows[:MAX_NAMES]]


def _fit_mask(table, rows, resources):
    """Rows with room for ``resources`` now (tentative claims included),
    within each inventory's min_unit/max_unit, as the claim will check."""
    mask = np.ones(len(rows), dtype=bool)
    for rc, amount in resources.items():
        columns = table.resources.get(rc)
        if columns is None:
            return np.zeros(len(rows), dtype=bool)
        mask &= ((table.free(rc, rows) >= amount)
                 & (columns.max_unit[rows] >= amount)
                 & (columns.min_unit[rows] <= amount))
    return mask
