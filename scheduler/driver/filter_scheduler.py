"""FilterScheduler: filter and weigh in memory, then claim in the database.

Before each planning attempt, the preload step reads what the attempt
needs from the database, once: the request's server group
(``GroupPlacement``, the driver's own: the claim enforces it), then the
data each enabled filter and weigher asks for through its ``preload``
hook (``scheduler.filters.base``; the driver names no plugin).

Phase one (under the worker's host-state lock, no DB locks): run the
requested-hosts step and the filters over the host table, then for each
instance weigh the hosts that still fit (``scheduler.model.fit``), pick at
random among the best ``host_subset_size`` and *assume* its claim
(``scheduler.host_state.assumed``), so the next instance of the request
and the other threads of this worker plan around it. With a hard
affinity group, the first instance only goes to a host that can hold
every instance of the request (``copies_that_fit``), since it decides
where the others go.

Phase two: ``claims.claim_resources`` writes the claims of all instances in
one transaction; the request's tentative claims are then confirmed, or, on
a ``ClaimConflict`` (another worker was faster), forgotten in memory, the
providers involved re-read and the request planned again, up to
``[scheduler] claim_retries`` times; then it fails with ``NoValidHost``.

A request with ``resource_groups`` (a volume, a port ... beside or
instead of the instance) is planned by ``GroupPlanner``
(``scheduler.driver.group_planner``): one provider per group and
instance, all claimed in the same transaction; a request without groups
only ever considers compute providers.

The steps are public methods that other planners compose: ``filter``
(the rows past the filters), ``weigh`` (the weighers' total per row),
``top`` (the best rows, ties shuffled), ``no_valid_host`` (the answer
when nothing fits), and ``place_all``, the greedy placement of a
request's instances among the filtered rows, which the solver
(``scheduler.driver.solver``) overrides; ``GroupPlanner`` calls the
first four. ``prepare``, before a request is planned, is a variant's
step on the request's own state (the solver's batch window), empty
here.

A NoValidHost is only answered from a view that is fresh (a forced
refresh when the poller may be behind) and holds no tentative claim of
another request of this worker (which might still lose): otherwise the
request waits for one of those to settle and plans again.

Every decision is logged at INFO in one line (request id, instances,
chosen hosts, hosts considered, milliseconds per phase) and recorded in
``recorder`` (``scheduler.driver.decision_recorder.DecisionRecorder``);
the filter-by-filter counts are logged at DEBUG.
"""

import dataclasses
import time

import numpy as np
from oslo_log import log as logging
from oslo_utils import uuidutils

from scheduler.db import claims
from scheduler import exception
from scheduler.model import fit
from scheduler.driver import decision_recorder
from scheduler import objects
from scheduler.driver.diagnosis import MAX_NAMES
from scheduler.driver.diagnosis import Diagnosis
from scheduler.driver.group_planner import GroupPlanner
from scheduler.driver import plugins
from scheduler.driver.requested_hosts import requested_hosts_mask
from scheduler.driver.server_groups import GroupPlacement
from scheduler.host_state.assumed import AssumedClaims
from scheduler.model import resource_groups
from scheduler.model.request_state import RequestState

LOG = logging.getLogger(__name__)

# how long a request may wait for this worker's other tentative claims to
# settle before it answers NoValidHost anyway
SETTLE_WAIT = 10.0

# the random jitter that shuffles hosts of equal weight (see top)
TIE_JITTER = 1e-9

# no rows (a diagnosis step that removed nothing)
_NONE = np.empty(0, dtype=np.intp)


@dataclasses.dataclass
class _Plan:
    selections: list
    claims: list
    rows: list


class _Decision:
    """What one select_destinations call did, for the log and metrics."""

    def __init__(self, clock):
        self._clock = clock
        self.started = clock()
        self.timings = dict.fromkeys(('refresh', 'preload', 'filter',
                                      'weigh', 'claim'), 0.0)
        self.conflicts = 0
        self.settle_waits = 0
        self.considered = 0
        self.fresh = False
        # the request names its instance uuids: it may repeat one whose
        # claims are held (``FilterScheduler._held``)
        self.repeat_of = False

    def timed(self, phase, fn, *args):
        began = self._clock()
        try:
            return fn(*args)
        finally:
            self.timings[phase] += self._clock() - began

    def close(self):
        self.timings['total'] = self._clock() - self.started
        return self.timings


class FilterScheduler:

    def __init__(self, conf, db, host_cache, filters, weighers, rng=None,
                 recorder=None):
        self.db = db
        self.cache = host_cache
        self.filters = filters
        self.weighers = weighers
        self.host_subset_size = conf.filter_scheduler.host_subset_size
        self.max_attempts = conf.scheduler.max_attempts
        self.claim_retries = conf.scheduler.claim_retries
        #: a placement's line at INFO (else DEBUG; a refusal: INFO)
        self.log_decisions = conf.scheduler.log_decisions
        self.rng = rng or np.random.default_rng()
        self.recorder = recorder or decision_recorder.DecisionRecorder()
        self._fit_filtered = any(f.applies_fit_rule for f in filters)
        self.assumed = AssumedClaims(host_cache)
        # the first request builds every column the weighers read in one
        # pass over the attributes
        for weigher in weighers:
            host_cache.table.expect_columns(weigher.columns)
        self.groups = GroupPlanner(
            self, conf.filter_scheduler.locality_weight_multiplier)
        self._clock = time.monotonic

    @property
    def claim_conflicts(self):
        return self.recorder.snapshot()['claim_conflicts']

    def select_destinations(self, ctxt, spec, instance_uuids=None,
                            return_alternates=False, checked=None,
                            call=None):
        """Claim a host for every instance; see the module docstring.
        ``checked``: the ``RequestState`` the RPC edge's plugin checks
        built from ``spec``, or None; ``call``: the RPC call served (a
        ``scheduler.model.call.Call``: its deadline, the claims it
        wrote), or None."""
        request, consumers = _request(ctxt, spec, instance_uuids, checked,
                                      call)
        self.prepare(request, consumers)
        decision = _Decision(self._clock)
        # a repeat (same instance uuids) is recognised at claim time
        decision.repeat_of = bool(instance_uuids)
        try:
            selections = self._decide(request, consumers, return_alternates,
                                      decision)
        except exception.NoValidHost:
            # a repeat on a full cloud: its own claims took the room
            held = (self._held(request, consumers) if decision.repeat_of
                    else None)
            if held is not None:
                return held
            self._record(ctxt, consumers, decision, None)
            raise
        self._record(ctxt, consumers, decision, selections)
        return selections

    def prepare(self, request, consumers):
        """A variant's step before a request is planned, on the request's
        own state (``RequestState``); the filter scheduler has none."""

    def check_destination(self, ctxt, spec, instance_uuids=None):
        """Whether the instance may stay where it is with what ``spec``
        now asks of its image: nova's rebuild check. The host the
        request names (``force_hosts`` and ``force_nodes``, as nova
        sends it, or ``requested_destination``) through the filters that
        judge the image (``BaseFilter.judges_image``), no fit rule (the
        instance holds its resources there), no claim, no alternates.
        One ``[Selection]`` per instance, or NoValidHost as
        ``select_destinations`` raises it."""
        request, consumers = _request(ctxt, spec, instance_uuids)
        if not (request.force_hosts or request.force_nodes or
                request.requested_destination):
            raise exception.InvalidField(
                field='spec_obj.force_hosts',
                reason='a check in place names the host it checks')
        decision = _Decision(self._clock)
        self._refresh(decision)
        decision.timed('preload', self._preload, request, consumers)
        try:
            with self.cache.lock:
                table = self.cache.table
                rows = decision.timed(
                    'filter', self.filter, table, request,
                    Diagnosis(table.size), _compute_only(table),
                    [f for f in self.filters if f.judges_image])
                decision.considered = len(rows)
                selections = [[self._selection(table, rows[0], consumer,
                                               request, False, 0.0)]
                              for consumer in consumers]
        except exception.NoValidHost:
            self._record(ctxt, consumers, decision, None)
            raise
        self._record(ctxt, consumers, decision, selections)
        return selections

    def _held(self, request, consumers):
        """A repeated request's answer (a call delivered again after its
        worker died, or the caller's retry), asked by the claim when the
        consumers turn out to hold claims: the claims they hold
        (``claims.held_claims``), while the request still allows their
        hosts; None to replace them with the plan's (a reschedule)."""
        if resource_groups.has_groups(request.spec):
            return None
        held = claims.held_claims(self.db, consumers, request.resources,
                                  request.call)
        if held is None:
            return None
        with self.cache.lock:
            table = self.cache.table
            allowed = requested_hosts_mask(table, request)
            rows = [table.row_of(c.provider_id) for c in held]
            if any(r is None or not allowed[r] for r in rows):
                return None
            answer = [[self._selection(table, r, c.consumer_uuid, request,
                                       False, 0.0)]
                      for r, c in zip(rows, held)]
        LOG.info('Repeated request for %s: answered with the claims it '
                 'holds', ', '.join(consumers))
        return answer

    def plan(self, request, consumers, return_alternates=False):
        """The selections ``select_destinations`` would make for
        ``request`` (a ``RequestState``) from this worker's view as it
        is: the preload step, filters, weighers and the pick, without a
        refresh, a claim or a recorded decision; the tentative claims are
        forgotten before it returns. Raises NoValidHost as
        select_destinations does, without planning again. For what-if
        tools and benchmarks."""
        decision = _Decision(self._clock)
        key = object()
        try:
            self._preload(request, consumers)
            return self._plan_locked(request, consumers, return_alternates,
                                     decision, key).selections
        finally:
            self.assumed.forget(key)

    def _decide(self, request, consumers, return_alternates, decision):
        deadline = self._clock() + SETTLE_WAIT
        while True:
            self._refresh(decision, force=decision.conflicts > 0)
            decision.timed('preload', self._preload, request, consumers)
            key = object()  # this attempt's tentative claims
            try:
                plan = self._plan_locked(request, consumers,
                                         return_alternates, decision, key)
            except exception.NoValidHost:
                self.assumed.forget(key)
                if self._may_be_false(key, decision, deadline):
                    continue
                raise
            selections = self._claim(plan, request, consumers, decision,
                                     key)
            if selections is not None:
                return selections
            if decision.conflicts > self.claim_retries:
                diagnosis = Diagnosis(self.cache.table.size)
                diagnosis.claim_conflicts = decision.conflicts
                diagnosis.note = 'gave up after %d claim attempts' % (
                    decision.conflicts)
                raise exception.NoValidHost(
                    reason=diagnosis.reason(),
                    diagnosis=diagnosis.as_dict())

    def _refresh(self, decision, force=False):
        decision.timed('refresh', self.cache.refresh, force)
        # once forced, the view stays as fresh as this worker can make it
        # (later changes of its own are applied in memory)
        decision.fresh = (decision.fresh or force
                          or self.cache.refresh_interval <= 0)
        lag = self.cache.staleness()
        if lag is not None:
            self.recorder.refresh_lag(lag)

    def _may_be_false(self, key, decision, deadline):
        """Could this NoValidHost be false? Then make the view truer
        (refresh it, or wait for another request's tentative claims to
        settle) and say so: the caller plans again."""
        if not decision.fresh:
            self._refresh(decision, force=True)
            return True
        remaining = deadline - self._clock()
        if remaining > 0 and self.assumed.wait_for_others(key, remaining):
            decision.settle_waits += 1
            return True
        return False

    def _claim(self, plan, request, consumers, decision, key):
        """Write the plan's claims and return the selections: the plan's,
        or, for a repeated request, those of the claims it holds
        (``_held``); None on a conflict."""
        try:
            held = decision.timed('claim', self._write, plan, request,
                                  consumers, decision.repeat_of)
        except exception.ClaimConflict as exc:
            decision.conflicts += 1
            self.assumed.forget(key)
            LOG.info('Claim conflict: %s; re-planning (attempt %d)',
                     exc, decision.conflicts)
            self.cache.reload_providers({c.provider_id for c in plan.claims})
            return None
        except exception.CallerGaveUp as exc:
            self.assumed.forget(key)
            LOG.warning('Not claimed: %s', exc)
            raise
        except Exception:
            self.assumed.forget(key)
            raise
        if held is not None:
            self.assumed.forget(key)    # nothing written: the held stand
            return held
        self.assumed.confirm(key)
        return plan.selections

    def _write(self, plan, request, consumers, repeat):
        """Commit the plan's claims; None once written. A possible repeat
        whose consumers turn out to hold claims is answered with them
        (``_held``) if it can be, else they are replaced."""
        group = request.group.claim_policy() if request.group else None
        if claims.claim_resources(self.db, plan.claims, None, group,
                                  request.call, unless_held=repeat):
            return None
        held = self._held(request, consumers)
        if held is None:
            claims.claim_resources(self.db, plan.claims, None, group,
                                   request.call)
        return held

    def _record(self, ctxt, consumers, decision, selections):
        timings = decision.close()
        refused = selections is None
        self.recorder.decision(timings, len(consumers), decision.conflicts,
                               refused, decision.settle_waits)
        level = (logging.INFO if refused or self.log_decisions
                 else logging.DEBUG)
        if not LOG.isEnabledFor(level):
            return
        chosen = ('NoValidHost' if refused else
                  ','.join(s[0].host for s in selections))
        LOG.log(level, 'Decision %s: %d instance(s) %s -> %s; %d hosts '
                'considered; %d conflict(s); ms: %s',
                getattr(ctxt, 'request_id', None), len(consumers),
                _first_of(consumers), chosen,
                decision.considered, decision.conflicts,
                ' '.join('%s=%.2f' % (k, v * 1e3)
                         for k, v in timings.items()))

    def _preload(self, request, consumers):
        """What this planning attempt reads from the database, once: the
        request's server group (core state: the claim enforces its hard
        policy), then each plugin's own data through its preload hook."""
        store = plugins.StoredData(self.db, consumers)
        request.group = _server_group(request, store)
        plugins.preload((*self.filters, *self.weighers), request, store)

    def _plan_locked(self, request, consumers, return_alternates,
                     decision, key):
        with self.cache.lock:
            table = self.cache.table
            diagnosis = Diagnosis(table.size)
            diagnosis.claim_conflicts = decision.conflicts
            plan = _Plan([], [], [])
            if resource_groups.has_groups(request.spec):
                return self._plan_groups(table, request, consumers,
                                         return_alternates, decision, key,
                                         plan)
            candidates = decision.timed('filter', self.filter, table,
                                        request, diagnosis,
                                        _compute_only(table))
            decision.considered = len(candidates)
            self.place_all(table, request, candidates, consumers,
                            return_alternates, plan, diagnosis, decision,
                            key)
            return plan

    def place_all(self, table, request, candidates, consumers,
                   return_alternates, plan, diagnosis, decision, key):
        """Place every instance of a request without resource groups
        among ``candidates`` (the hosts past the filters): greedily, one
        after the other, each on the best host left. The hook another
        driver overrides (``scheduler.driver.solver``)."""
        for consumer in consumers:
            decision.timed('weigh', self._place_one, table, request,
                           candidates, consumer, return_alternates, plan,
                           diagnosis, len(consumers), key)

    def _plan_groups(self, table, request, consumers, return_alternates,
                     decision, key, plan):
        """A request of several resource groups (``GroupPlanner``)."""
        rows_by_group = decision.timed('filter', self.groups.candidates,
                                       table, request)
        decision.considered = sum(len(r) for r in rows_by_group.values())
        for consumer in consumers:
            decision.timed('weigh', self.groups.place, table, request,
                           rows_by_group, consumer, return_alternates,
                           plan, key)
        return plan

    def filter(self, table, request, diagnosis, within=None,
               filters=None):
        """Rows that pass every filter (among ``within``, a mask of the
        providers of the request's kind, if given; ``filters``: those
        of the driver when None), in row order; the table's read-only
        ``every_row()`` when all of them pass."""
        alive = requested_hosts_mask(table, request)
        hosts_in = table.size
        if within is not None:
            hosts_in = int(np.count_nonzero(within))
            if not diagnosis.steps:  # only providers of that kind count
                diagnosis.total_hosts = hosts_in
            alive &= within
        hosts_left = int(np.count_nonzero(alive))
        # the removed rows are only listed when there are some (the
        # usual request names no host): counting is one cheap pass
        removed = (_NONE if hosts_left == hosts_in else
                   np.flatnonzero(~alive if within is None
                                  else within & ~alive))
        diagnosis.add('RequestedHosts', hosts_in, len(removed),
                      _names(table, removed),
                      'force/ignore/retry/destination' if len(removed)
                      else None)
        hosts_in = hosts_left
        for plugin in self.filters if filters is None else filters:
            if not hosts_in:
                break
            if not plugin.applies_to(request):
                # every host passes: no mask over every row
                diagnosis.add(plugin.name, hosts_in, 0, [], None)
                continue
            # the row list only for per-host plugins (hot spot 4)
            rows = None if plugin.vectorized else np.flatnonzero(alive)
            kept = alive & plugin.mask_for(table, request, rows)
            hosts_out = hosts_in - int(np.count_nonzero(kept))
            if hosts_out:
                out = np.flatnonzero(alive ^ kept)  # alive, not kept
                diagnosis.add(plugin.name, hosts_in, hosts_out,
                              _names(table, out),
                              plugin.explain(table, request, out))
                alive = kept
                self.recorder.rejected(plugin.name, hosts_out)
            else:
                diagnosis.add(plugin.name, hosts_in, 0, [], None)
            hosts_in -= hosts_out
        if LOG.isEnabledFor(logging.DEBUG):  # the join is not free
            LOG.debug('Filters: %s', '; '.join(
                '%(filter)s %(hosts_in)d -> %(hosts_out)d removed' % step
                for step in diagnosis.steps))
        # every row passed (the usual request at a fraction of capacity):
        # the table's own index, so the weighers read whole columns
        candidates = (table.every_row() if hosts_in == table.size
                      else np.flatnonzero(alive))
        if not len(candidates):
            self.no_valid_host(request, diagnosis)
        return candidates

    def no_valid_host(self, request, diagnosis, note=None):
        """Raise NoValidHost with what ``diagnosis`` counted (host names
        to an admin only), and ``note`` (why nothing fit) if given."""
        if note is not None:
            diagnosis.note = note
        raise exception.NoValidHost(
            reason=diagnosis.reason(show_hosts=request.is_admin),
            diagnosis=diagnosis.as_dict(show_hosts=request.is_admin))

    def _place_one(self, table, request, candidates, consumer,
                   return_alternates, plan, diagnosis, total, key):
        fitting = self._fitting(table, request, candidates, plan)
        fitting, group_note = _allowed_by_group(request, table, fitting)
        fitting, gang_note = _holding_the_gang(
            request, table, fitting, total - len(plan.claims))
        if not len(fitting):
            notes = ['only %d of %d instances fit, none placed' % (
                len(plan.claims), total)] if plan.claims else []
            notes += [n for n in (group_note, gang_note) if n]
            self.no_valid_host(request, diagnosis,
                                note='; '.join(notes) or None)
        wanted = max(self.host_subset_size,
                     self.max_attempts if return_alternates else 1)
        ranked, weights = self._rank(table, fitting, request, wanted)
        pick = int(self.rng.integers(min(self.host_subset_size,
                                         len(ranked))))
        self._take(table, request, int(ranked[pick]), weights[pick],
                   consumer, plan, key)
        if return_alternates:
            self._add_alternates(table, request, ranked, weights, plan)

    def _fitting(self, table, request, candidates, plan):
        """The ``candidates`` where one more instance fits now."""
        if plan.claims or not self._fit_filtered:
            return candidates[fit.fits_all(table, request.resources,
                                           candidates)]
        # a filter applied this very rule to this table under the same
        # lock: nothing changed since
        return candidates

    def _take(self, table, request, chosen, weight, consumer, plan, key):
        """Assume ``consumer`` on row ``chosen``: its claim and its
        selection (the destination) join ``plan``."""
        self.assumed.assume(key, chosen, dict(request.resources))
        if request.group is not None:
            request.group.placed(table.hosts[chosen])
        plan.claims.append(claims.Claim(
            consumer, int(table.provider_id[chosen]),
            dict(request.resources), host=table.hosts[chosen]))
        plan.rows.append(chosen)
        plan.selections.append([self._selection(
            table, chosen, consumer, request, False, weight)])

    def _add_alternates(self, table, request, ranked, weights, plan):
        """Append to the last selection the alternates among ``ranked``
        (best first): hosts where the instance still fits and its group
        allows it, up to ``max_attempts`` selections in all."""
        selections = plan.selections[-1]
        chosen, consumer = plan.rows[-1], selections[0].instance_uuid
        for row, weight in zip(ranked, weights):
            if len(selections) >= self.max_attempts:
                break
            row = int(row)
            if (row != chosen and table.fits(row, request.resources)
                    and _group_allows(request, table, row)):
                selections.append(self._selection(
                    table, row, consumer, request, True, weight))

    def _rank(self, table, rows, request, wanted):
        """The ``wanted`` best rows, best first, and their weights; ties
        in random order."""
        return self.top(rows, self.weigh(table, rows, request), wanted)

    def weigh(self, table, rows, request):
        """The weighers' total weight of each row."""
        total = np.zeros(len(rows), dtype=np.float64)
        for weigher in self.weighers:
            weighted = weigher.weighted(table, rows, request)
            if weighted is not None:
                total += weighted
        return total

    def top(self, rows, total, wanted):
        """The ``wanted`` rows of highest ``total``, best first.

        A jitter far below any real weight difference (``TIE_JITTER``)
        shuffles ties. Only the rows within it of the ``wanted``-th best
        total can end up among the best, so only those are jittered and
        ranked: the same choice, drawn the same way, at the cost of a
        couple of passes over the candidates instead of a random number
        each and a partition of all of them.
        """
        wanted = min(wanted, len(rows))
        best = total.max()
        if np.isnan(best):  # NaN weights: rank all, NaN last
            near = np.arange(len(rows))
        else:
            kth = best if wanted == 1 else _kth_largest(total, wanted)
            near = np.flatnonzero(total >= kth - TIE_JITTER)
        jittered = total[near] + self.rng.random(len(near)) * TIE_JITTER
        if len(near) == 1:  # no tie: nothing to sort
            return rows[near], jittered
        if wanted < len(near):
            top = np.argpartition(-jittered, wanted - 1)[:wanted]
        else:
            top = np.arange(len(near))
        top = top[np.argsort(-jittered[top], kind='stable')]
        return rows[near[top]], jittered[top]

    @staticmethod
    def _selection(table, row, consumer, request, is_alternate, weight):
        limits = {rc: int(cols.capacity[row])
                  for rc, cols in table.resources.items()
                  if rc in request.resources}
        return objects.Selection.build(
            host=table.hosts[row], nodename=table.nodenames[row],
            compute_node_uuid=table.uuids[row], instance_uuid=consumer,
            allocation_id=None if is_alternate else consumer,
            allocation={} if is_alternate else dict(request.resources),
            limits=limits, weight=float(weight),
            is_alternate=is_alternate)


def _kth_largest(values, k):
    """The ``k``-th largest of ``values`` (1: the largest)."""
    if k == 1:
        return values.max()
    if k <= 8:
        # a few passes beat a partition of every candidate
        rest = values.copy()
        for _ in range(k - 1):
            rest[rest.argmax()] = -np.inf
        return rest.max()
    return np.partition(values, len(values) - k)[len(values) - k]


def _request(ctxt, spec, instance_uuids, checked=None, call=None):
    """The request state of ``spec`` for the caller ``ctxt`` (``checked``:
    the one the edge's checks built; ``call``: the RPC call's), and its
    consumers: ``instance_uuids``, else the spec's, else new ones."""
    request = RequestState.for_planning(
        spec, is_admin=bool(getattr(ctxt, 'is_admin_caller', False)),
        checked=checked, call=call)
    consumers = list(instance_uuids or spec.get('instance_uuids') or
                     [uuidutils.generate_uuid()
                      for _ in range(spec.num_instances)])
    return request, consumers


def _compute_only(table):
    """Mask of the compute providers, None when there are no others."""
    if len(table.labels.kind_names) <= 1 and (
            table.labels.kind_names in ([], ['compute'])):
        return None
    return table.labels.of_kind('compute', table.size)


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


def copies_that_fit(table, resources, rows):
    """How many instances of ``resources`` fit together on each of
    ``rows`` now: the fit rule for one (its units), and the free
    capacity it reads for the sum."""
    count = np.where(fit.fits_all(table, resources, rows),
                     np.iinfo(np.int64).max, 0)
    for rc, amount in resources.items():
        if amount > 0:
            count = np.minimum(count, table.free(rc, rows) // amount)
    return count


def _holding_the_gang(request, table, rows, remaining):
    """With a hard affinity group, the rows that can hold the
    ``remaining`` instances of the request all together (the first
    instance decides the host of every other), and why none if none."""
    group = request.group
    if group is None or group.policy != 'affinity' or remaining <= 1 \
            or not len(rows):
        return rows, None
    holding = rows[copies_that_fit(table, request.resources, rows)
                   >= remaining]
    if len(holding):
        return holding, None
    return holding, 'server group %s (affinity): none of the %d host(s) ' \
        'that fit holds all %d instances' % (group.uuid, len(rows),
                                              remaining)


def _group_allows(request, table, row):
    return request.group is None or bool(
        request.group.allows(table, [row])[0])


def _server_group(request, store):
    """The request's server group as placed so far (None without one):
    members placed by claims, or reported by trackers, the request's own
    instances left out."""
    group = request.spec.get('instance_group')
    if group is None or not group.get('policy'):
        return None
    placed = (store.group_member_hosts(group.uuid) if group.get('uuid')
              else {})
    members = group.get('members') or ()
    reported = store.reported_members(members)
    moving = not store.consumers.isdisjoint(members)
    return GroupPlacement.from_group(group, placed, reported,
                                     listed_hosts=not moving)


def _names(table, rows):
    """Host names of the first rows, as many as a diagnosis keeps."""
    return [table.hosts[int(r)] for r in rows[:MAX_NAMES]]


def _first_of(consumers, shown=2):
    """The first consumers of a decision, for its log line (an operator
    finds an instance's decision by its uuid)."""
    more = len(consumers) - shown
    return ','.join(consumers[:shown]) + (' +%d' % more if more > 0 else '')

