"""Atomic claims against the database: the race fix.

Phase one of scheduling picks hosts from memory without locks; phase two,
here, writes the claims in one transaction (``scheduler.db.changes.write``)
that re-checks capacity in SQL with the fit rule of
``scheduler.model.fit``, for every (provider, class) of the request in one
statement:

    UPDATE inventories SET claimed = claimed + CASE ... END
     WHERE provider_id IN (...) AND <amount> IS NOT NULL
       AND claimed + <amount> <= capacity
       AND reported_used + <amount> <= capacity ...

Usage is the larger of what the tracker reported and what claims add up
to, so both sums are checked. Fewer rows updated than asked for means
another worker took the capacity (or a report shrank it): the whole
transaction rolls back and ``ClaimConflict`` names the provider, so a
request for N instances gets either all N claims or none.

A claim of new consumers is a bounded number of statements whatever the
number of instances: lock the providers, the UPDATE above, one multi-row
INSERT, then the feed's stripe bump and stamp (plus the group's
statements for a server group). On PostgreSQL (and SQLite) the lock also
answers whether the consumers hold claims already, and the stamp carries
the bump: BEGIN, 4 statements, COMMIT. MariaDB has no ``UPDATE ...
RETURNING``: a plain SELECT of previous claims comes first and the bump
is its own statement: 6 statements and COMMIT. The statements are built
once and reused, so SQLAlchemy's compiled cache serves every execution
without building or walking a statement per call. A claim of new
consumers without a server group runs those same statements inside a
routine of the database instead (``scheduler.db.claim_routines``:
PostgreSQL's function, one round trip in autocommit; MariaDB's
procedure, ``CALL`` and ``COMMIT``); every other claim, every claim on
SQLite, and every claim when the routine is missing, takes the
transaction described here.

Claims are stamped with the database server's clock (``db.clock``,
``scheduler.db.clock``), as reports and instance updates are: the times
they are compared with come from other hosts, whose clocks may differ
from this one's.

Every writer here locks the providers it changes with the one lock,
``Change.lock_providers`` (``scheduler.db.changes``: lock order providers
by ascending id -> inventories -> feed stripe, the SQL of each database,
the generation it bumps); deadlocks that the database still reports are
retried by ``wrap_db_retry``.
"""

import collections
import dataclasses
import datetime
import functools
import math

import sqlalchemy as sa
from oslo_db import exception as db_exc

from scheduler import exception
from scheduler.model import fit
from scheduler.db import api as db_api
from scheduler.db import changes
from scheduler.db import claim_routine
from scheduler.db import claim_routines
from scheduler.db import models

P = models.providers
INV = models.inventories
ALLOC = models.allocations
GROUPS = models.instance_groups
GM = models.group_members


@dataclasses.dataclass(frozen=True)
class Claim:
    """Resources one consumer takes from one provider (on ``host``; None
    for a provider that is not the instance's compute host)."""

    consumer_uuid: str
    provider_id: int
    resources: dict
    host: str = None


@dataclasses.dataclass(frozen=True)
class GroupPolicy:
    """A hard server-group policy to enforce at claim time."""

    group_uuid: str
    policy: str            # 'affinity' or 'anti-affinity'
    max_per_host: int = 1  # anti-affinity only


class _DidNotFit(Exception):
    """The claim UPDATE took fewer rows than asked (rolls back the
    transaction; ``claim_resources`` then says which one)."""

    def __init__(self, per_provider):
        super().__init__()
        self.per_provider = per_provider


def _per_row_amount(pairs):
    """CASE giving each (provider, class) its amount (NULL elsewhere), so
    one statement updates many inventory rows by different amounts."""
    return sa.case(*[(sa.and_(INV.c.provider_id == p,
                              INV.c.resource_class == rc), amount)
                     for (p, rc), amount in sorted(pairs.items())],
                   else_=None)


def _release_rows(session, rows):
    """Give back the amounts of these allocation rows: one UPDATE and one
    DELETE, whatever their number."""
    if not rows:
        return
    pairs = collections.Counter()
    for row in rows:
        pairs[(row.provider_id, row.resource_class)] += row.amount
    amount = _per_row_amount(pairs)
    session.execute(
        sa.update(INV).where(INV.c.provider_id.in_({p for p, _ in pairs}),
                             amount.is_not(None))
        .values(claimed=sa.case((INV.c.claimed > amount,
                                 INV.c.claimed - amount), else_=0))
        .execution_options(synchronize_session=False))
    session.execute(sa.delete(ALLOC).where(
        ALLOC.c.id.in_([r.id for r in rows])))


_ALLOCATIONS_OF = sa.select(ALLOC).where(ALLOC.c.consumer_uuid.in_(
    sa.bindparam('consumers', expanding=True)))
_ALLOCATIONS_OF_LOCKED = _ALLOCATIONS_OF.with_for_update()


def _allocations_of(session, consumers, lock=False):
    """The allocations of ``consumers`` (locked if ``lock``)."""
    return session.execute(
        _ALLOCATIONS_OF_LOCKED if lock else _ALLOCATIONS_OF,
        {'consumers': list(consumers)}).all()


@db_api.retry_on_deadlock
def claim_resources(db, claims, now=None, group=None, call=None,
                    unless_held=False):
    """Write every claim or none; raise ClaimConflict if one doesn't fit.

    Claims already held by the same consumers are replaced (a reschedule
    moves the claim to the new host). With a hard server-group ``group``
    (a ``GroupPolicy``), the group's row is locked first and the policy is
    checked against the members already placed, so concurrent requests
    of one group can't break it (``GroupPolicyConflict``).

    With ``unless_held``, consumers that turn out to hold claims keep
    them: nothing is written and False returned, so that the caller can
    answer a repeated request with what it holds (``held_claims``), or
    claim again without ``unless_held`` to replace them. A request whose
    consumers hold nothing (nearly all) pays no statement for this: the
    lock tells (``_lock_claimed``). Returns True when the claims were
    written.

    ``call`` (a ``scheduler.model.call.Call``, or None): the RPC call the
    claims serve. Past its deadline each try (a deadlock's retry too)
    writes nothing and raises ``CallerGaveUp``; what is committed is
    added to its ``written``.
    """
    consumers = [c.consumer_uuid for c in claims]
    if call is not None:
        call.check_waited_for(consumers)
    now = now or db.clock.now()
    try:
        try:
            _claim(db, claims, now, group, ask_first=unless_held)
        except _HoldsClaims:
            if unless_held:
                return False
            if call is not None:
                call.check_waited_for(consumers)
            _claim(db, claims, now, group, held_known=True)
    except _DidNotFit as exc:
        # read outside the rolled-back transaction: what the claim saw,
        # less any change since (this names the provider, nothing more)
        with db.reader() as session:
            raise exception.ClaimConflict(**_short(session,
                                                   exc.per_provider))
    if call is not None:
        call.wrote({(c.consumer_uuid, c.provider_id) for c in claims}, now)
    return True


def _claim(db, claims, now, group, held_known=False, ask_first=False):
    routine = (claim_routines.of(db, sum(len(c.resources) for c in claims))
               if group is None and not held_known else None)
    if routine is not None and _claim_by_routine(routine, db, claims, now):
        return
    consumers = sorted({c.consumer_uuid for c in claims})
    with changes.write(db) as change:
        session = change.session
        if group is not None:
            _lock_group(session, group)
            _enforce_group(session, group, claims, now)
        claimed = {c.provider_id for c in claims}
        held_on = _lock_claimed(change, claimed, consumers, held_known)
        if held_on and ask_first and not held_known:
            raise _HoldsClaims()
        # the driver confirms the new claims in its host table
        # (AssumedClaims); released ones it learns from the feed
        change.applied_in_memory = not held_on
        touched = set(claimed)
        if held_on:
            previous, touched = _claims_under_lock(change, consumers,
                                                   claimed | held_on)
            _release_rows(session, previous)
        _take(session, _per_provider(claims), claims)
        session.execute(_INSERT_ALLOCATIONS, [
            {'consumer_uuid': c.consumer_uuid, 'provider_id': c.provider_id,
             'resource_class': rc, 'amount': amount, 'created_at': now,
             'confirmed_at': None}
            for c in claims for rc, amount in sorted(c.resources.items())])
        change.providers(touched)


_INSERT_ALLOCATIONS = sa.insert(ALLOC)


def _claim_by_routine(routine, db, claims, now):
    """The same claim through the database's ``routine`` (a module of
    ``scheduler.db.claim_routines``: one or two round trips); False if
    the caller should go the long way (the routine is gone from the
    database, or a provider it missed is back)."""
    claimed = {c.provider_id for c in claims}
    per_provider = _per_provider(claims)
    try:
        if routine.claim(
                db, claimed, {c.consumer_uuid for c in claims},
                _take_pairs(per_provider, claims),
                [(c.consumer_uuid, c.provider_id, rc, amount)
                 for c in claims
                 for rc, amount in sorted(c.resources.items())],
                now):
            return True
        claim_routines.lost(db)
        return False
    except claim_routine.Held:
        raise _HoldsClaims()
    except claim_routine.DidNotFit:
        raise _DidNotFit(per_provider)
    except claim_routine.Gone:
        with db.reader() as session:
            _check_exist(session, claimed)
        return False  # back since: the long way decides


class _HoldsClaims(Exception):
    """The consumers hold claims already (a reschedule): roll back and
    claim again, reading them first (``claim_resources``)."""


def _lock_claimed(change, claimed, consumers, held_known):
    """Lock the providers of the claims and of the consumers' previous
    claims, in one call of the one lock; the providers of the previous
    claims (empty if none). ClaimConflict if a claimed provider is gone.

    Where the lock can carry the probe (``lock_probes_claims``:
    PostgreSQL, SQLite) and the request's consumers are not known to hold
    claims, the lock itself says whether they do; if they do,
    ``_HoldsClaims`` rolls back, so that the providers of the previous
    claims are locked in the same call, in order, by the next attempt.
    Otherwise (MySQL, MariaDB, or a retry) the previous claims are read
    first, by a plain SELECT.
    """
    session = change.session
    if change.lock_probes_claims and not held_known:
        locked = change.lock_providers(claimed, held_by=consumers)
        if locked.found != len(claimed):
            _check_exist(session, claimed)
        if locked.held:
            raise _HoldsClaims()
        return set()
    previous = {r.provider_id for r in _allocations_of(session, consumers)}
    touched = claimed | previous
    if change.lock_providers(touched).found != len(touched):
        _check_exist(session, touched)
    return previous


def _claims_under_lock(change, consumers, locked):
    """The consumers' claims, read under the locks of their providers;
    returns them and every provider locked (``locked`` and more).

    The providers were found by a read before the lock: a claim that moved
    meanwhile (a concurrent reschedule) is on a provider not locked yet,
    which is locked now, out of order (a deadlock is retried whole), so
    that no provider changes without its lock and generation.
    """
    locked = set(locked)
    while True:
        rows = _allocations_of(change.session, consumers, lock=True)
        more = {r.provider_id for r in rows} - locked
        if not more:
            return rows, locked
        change.lock_providers(more)
        locked |= more


def _check_exist(session, provider_ids):
    """ClaimConflict naming the first of these providers that is gone."""
    found = set(session.execute(sa.select(P.c.id).where(
        P.c.id.in_(list(provider_ids)))).scalars())
    if found != set(provider_ids):
        raise exception.ClaimConflict(
            provider=min(set(provider_ids) - found),
            resource_class='(deleted)')


def _lock_group(session, group):
    locked = session.execute(
        sa.update(GROUPS).where(GROUPS.c.uuid == group.group_uuid)
        .values(generation=GROUPS.c.generation + 1)).rowcount
    if not locked:
        # no savepoint: a worker that loses the race starts the whole
        # transaction over anyway, and MariaDB may answer two concurrent
        # inserts of one key with a deadlock that rolls back the whole
        # transaction, savepoint included (ROLLBACK TO SAVEPOINT then
        # failed with 1305 and hid the retryable deadlock)
        try:
            session.execute(sa.insert(GROUPS).values(
                uuid=group.group_uuid, policy=group.policy, generation=0))
        except db_exc.DBDuplicateEntry:
            # another worker created it first: start over and lock it
            raise db_exc.RetryRequest(exception.ClaimConflict(
                provider='(group %s)' % group.group_uuid,
                resource_class='-'))


def _enforce_group(session, group, claims, now):
    # only the instance's own (compute) claims name a host; the claims of
    # its other resource groups (a volume, a port) are not group members
    claims = [c for c in claims if c.host is not None]
    consumers = [c.consumer_uuid for c in claims]
    placed = collections.Counter(dict(session.execute(
        sa.select(GM.c.host, sa.func.count())
        .where(GM.c.group_uuid == group.group_uuid,
               GM.c.consumer_uuid.not_in(consumers))
        .group_by(GM.c.host)).all()))
    wanted = collections.Counter(c.host for c in claims)
    if group.policy == 'affinity':
        hosts = set(placed) | set(wanted)
        if len(hosts) > 1:
            raise exception.GroupPolicyConflict(
                group=group.group_uuid, policy=group.policy,
                hosts=', '.join(sorted(hosts)))
    else:
        crowded = sorted(h for h, n in wanted.items()
                         if placed[h] + n > group.max_per_host)
        if crowded:
            raise exception.GroupPolicyConflict(
                group=group.group_uuid, policy=group.policy,
                hosts=', '.join(crowded))
    session.execute(sa.delete(GM).where(
        GM.c.group_uuid == group.group_uuid,
        GM.c.consumer_uuid.in_(consumers)))
    session.execute(sa.insert(GM), [
        {'group_uuid': group.group_uuid, 'consumer_uuid': c.consumer_uuid,
         'host': c.host, 'created_at': now} for c in claims])


def _forget_members(session, consumers):
    if consumers:
        session.execute(sa.delete(GM).where(
            GM.c.consumer_uuid.in_(list(consumers))))


def _per_provider(claims):
    """Sum the claims of a request per provider, in lock order."""
    totals = {}
    for claim in sorted(claims, key=lambda c: c.provider_id):
        resources = totals.setdefault(claim.provider_id, {})
        for rc, amount in claim.resources.items():
            resources[rc] = resources.get(rc, 0) + amount
    return totals


def _single_amounts(claims):
    """(provider, class) -> the single amounts of the claims on it."""
    amounts = collections.defaultdict(list)
    for claim in claims:
        for rc, amount in claim.resources.items():
            if amount:
                amounts[(claim.provider_id, rc)].append(amount)
    return amounts


@functools.lru_cache(maxsize=64)
def _take_statement(size):
    """The claim's conditional UPDATE for ``size`` (provider, class)
    rows, built once per size so that executing it costs no statement
    building nor cache-key walk: row ``i`` is ``(:p<i>, :rc<i>)``, its
    summed amount ``:a<i>`` and the smallest, largest and gcd of its
    single amounts ``:lo<i>``, ``:hi<i>``, ``:g<i>`` (min/max/step hold
    per allocation, capacity for the sum); ``:ids`` are the providers."""
    rows = [(INV.c.provider_id == sa.bindparam('p%d' % i, type_=sa.Integer))
            & (INV.c.resource_class == sa.bindparam('rc%d' % i,
                                                    type_=sa.String))
            for i in range(size)]

    def per_row(name):
        return sa.case(*[(row, sa.bindparam('%s%d' % (name, i),
                                            type_=sa.BigInteger))
                         for i, row in enumerate(rows)], else_=None)

    amount = per_row('a')
    return (sa.update(INV).where(
        INV.c.provider_id.in_(sa.bindparam('ids', expanding=True)),
        amount.is_not(None),
        fit.sql_fits(INV, amount, (per_row('lo'), per_row('hi'),
                                   per_row('g'))))
        .values(claimed=INV.c.claimed + amount)
        .execution_options(synchronize_session=False))


def _take_pairs(per_provider, claims):
    """(provider, class, summed amount, smallest, largest, gcd of the
    single amounts) of every row a claim takes from, sorted."""
    singles = _single_amounts(claims)
    pairs = []
    for p, rc, amount in sorted(
            (p, rc, amount) for p, resources in per_provider.items()
            for rc, amount in resources.items() if amount):
        each = singles[(p, rc)]
        pairs.append((p, rc, amount, min(each), max(each),
                      math.gcd(*each)))
    return pairs


def _take(session, per_provider, claims):
    """One conditional UPDATE for every (provider, class) of the request;
    the fit rule is ``scheduler.model.fit.sql_fits``, the filters' own."""
    pairs = _take_pairs(per_provider, claims)
    if not pairs:
        return
    params = {'ids': sorted({p for p, *_ in pairs})}
    for i, (p, rc, amount, lo, hi, g) in enumerate(pairs):
        params.update({'p%d' % i: p, 'rc%d' % i: rc, 'a%d' % i: amount,
                       'lo%d' % i: lo, 'hi%d' % i: hi, 'g%d' % i: g})
    taken = session.execute(_take_statement(len(pairs)), params).rowcount
    if taken != len(pairs):
        raise _DidNotFit(per_provider)


def _short(session, per_provider):
    """``ClaimConflict`` arguments: the first provider and class whose
    claim does not fit (the rare path)."""
    rows = session.execute(sa.select(INV).where(
        INV.c.provider_id.in_(list(per_provider)))).all()
    for provider_id, resources in sorted(per_provider.items()):
        mine = {r.resource_class: r for r in rows
                if r.provider_id == provider_id}
        for rc, amount in sorted(resources.items()):
            row = mine.get(rc)
            if amount and (row is None or not fit.row_fits(row, amount)):
                return {'provider': provider_id, 'resource_class': rc}
    # fits now: the capacity was freed again since
    provider_id, resources = sorted(per_provider.items())[0]
    return {'provider': provider_id,
            'resource_class': ', '.join(sorted(resources))}


@db_api.retry_on_deadlock
def delete_allocations(db, consumer_uuid):
    """Release every claim of ``consumer_uuid``; returns how many rows.

    Idempotent: releasing a consumer with no claims does nothing.
    """
    with changes.write(db) as change:
        session = change.session
        rows = _allocations_of(session, [consumer_uuid])
        if not rows:
            return 0
        touched = {r.provider_id for r in rows}
        change.lock_providers(touched)
        rows, touched = _claims_under_lock(change, [consumer_uuid], touched)
        _release_rows(session, rows)
        _forget_members(session, [consumer_uuid])
        change.providers(touched)
        return len(rows)


@db_api.retry_on_deadlock
def sync_host_consumers(db, host, instance_uuids, grace_seconds, now=None):
    """Reconcile the claims on ``host`` with the instances it really runs.

    Claims of reported instances are confirmed; claims of consumers the
    host does not report and older than ``grace_seconds`` are released.
    Returns ``(confirmed, released)`` row counts.
    """
    now = now or db.clock.now()
    cutoff = now - datetime.timedelta(seconds=grace_seconds)
    running = set(instance_uuids)
    with changes.write(db) as change:
        session = change.session
        provider_ids = session.execute(
            sa.select(P.c.id).where(P.c.host == host)).scalars().all()
        if not provider_ids:
            return 0, 0
        on_host = sa.select(ALLOC).where(ALLOC.c.provider_id.in_(
            provider_ids))
        rows = session.execute(on_host).all()
        locked = any(_stale(r, running, cutoff) for r in rows)
        if locked:
            # releasing changes the providers: lock them (their generation
            # and the feed then say so) and read the claims again under
            # the locks; confirming alone changes no provider
            change.lock_providers(provider_ids)
            rows = session.execute(on_host.with_for_update()).all()
            change.providers(provider_ids)
        confirm = [r.id for r in rows
                   if r.consumer_uuid in running and r.confirmed_at is None]
        stale = [r for r in rows if _stale(r, running, cutoff)]
        if confirm:
            session.execute(sa.update(ALLOC).where(ALLOC.c.id.in_(confirm))
                            .values(confirmed_at=now))
        _release_rows(session, stale)
        _forget_members(session, {r.consumer_uuid for r in stale})
        return len(confirm), len(stale)


def confirm_host_consumers(db, host, instance_uuids, now=None):
    """Confirm the claims on ``host`` of ``instance_uuids``: its tracker
    reports them there (nova's ``update_instance_info`` after a build or a
    move), so their callers learnt where they went and a later request
    for one of them is a new one, not a repeat (``held_claims``). Returns
    how many rows were confirmed; confirming changes no provider."""
    uuids = list(instance_uuids)
    if not uuids:
        return 0
    now = now or db.clock.now()
    on_host = sa.select(P.c.id).where(P.c.host == host)
    with changes.write(db) as change:
        return change.session.execute(
            sa.update(ALLOC).where(
                ALLOC.c.provider_id.in_(on_host.scalar_subquery()),
                ALLOC.c.consumer_uuid.in_(uuids),
                ALLOC.c.confirmed_at.is_(None))
            .values(confirmed_at=now)
            .execution_options(synchronize_session=False)).rowcount


def release_host_consumer(db, host, consumer_uuid, before):
    """Release ``consumer_uuid``'s claims on ``host`` written before
    ``before``: its tracker says the instance left the host (deleted,
    shelved away, moved: nova's ``delete_instance_info``); a claim written
    since (the instance came back) is kept. Returns how many rows."""
    with changes.write(db) as change:
        session = change.session
        provider_ids = session.execute(
            sa.select(P.c.id).where(P.c.host == host)).scalars().all()
        if not provider_ids:
            return 0
        mine = sa.select(ALLOC).where(
            ALLOC.c.provider_id.in_(provider_ids),
            ALLOC.c.consumer_uuid == consumer_uuid,
            ALLOC.c.created_at < before)
        if not session.execute(mine.limit(1)).first():
            return 0
        change.lock_providers(provider_ids)
        rows = session.execute(mine.with_for_update()).all()
        _release_rows(session, rows)
        change.providers({r.provider_id for r in rows})
        return len(rows)


def _stale(row, running, cutoff):
    """A claim of a consumer its host does not run, past the grace."""
    return row.consumer_uuid not in running and row.created_at <= cutoff


@db_api.retry_on_deadlock
def release_unconfirmed(db, grace_seconds, now=None, limit=1000):
    """Release claims still unconfirmed ``grace_seconds`` after they were
    written, on any host: a claim whose caller never got the answer (its
    worker died mid-call) is released even if no tracker syncs. The
    instance of a claim that did reach its caller is confirmed by its
    host's ``sync_instance_info`` by then, or counted in the usage its
    tracker reports. At most ``limit`` rows per call; returns how many."""
    cutoff = (now or db.clock.now()) - datetime.timedelta(
        seconds=grace_seconds)
    unconfirmed = sa.select(ALLOC).where(ALLOC.c.confirmed_at.is_(None),
                                         ALLOC.c.created_at <= cutoff)
    with changes.write(db) as change:
        session = change.session
        rows = session.execute(unconfirmed.limit(limit)).all()
        if not rows:
            return 0
        touched = {r.provider_id for r in rows}
        change.lock_providers(touched)
        rows = session.execute(unconfirmed.where(
            ALLOC.c.id.in_([r.id for r in rows])).with_for_update()).all()
        _release_rows(session, rows)
        _forget_members(session, {r.consumer_uuid for r in rows})
        change.providers(touched)
        return len(rows)


def held_claims(db, consumers, resources, call=None):
    """The claims a repeated request already holds, or None if it is no
    repeat: one ``Claim`` per consumer, in the order of ``consumers``.

    A request is a **repeat** (a call the broker delivered again after
    its worker died, or the caller's retry after ``SchedulerUnavailable``)
    when every one of its consumers holds claims on exactly one provider,
    of exactly ``resources``, and none of them is confirmed yet (no
    tracker reported the instance running: its caller may never have
    learnt where it went). Its answer is these claims, never a second
    set. Anything else (no claims, confirmed ones: a move of a running
    instance; other amounts: a resize) is planned anew, and
    ``claim_resources`` replaces the claims held. The caller checks that
    the request still allows the hosts held (a reschedule names the host
    that failed among those to avoid). A repeat's claims are stamped
    anew (``_restamp``), so that the call that first wrote them, if it
    was answered too late, cannot release them (``release_written``).
    ``call``: as ``claim_resources``'s (a repeat's claims are taken over
    only while its caller waits, and added to its ``written``)."""
    consumers = list(consumers)
    wanted = {rc: amount for rc, amount in resources.items() if amount}
    if not consumers or not wanted:
        return None
    query = (sa.select(ALLOC, P.c.host).join(P, P.c.id == ALLOC.c.provider_id)
             .where(ALLOC.c.consumer_uuid.in_(consumers)))
    with db.reader() as session:
        rows = session.execute(query).all()
    held = {}
    for row in rows:
        if row.confirmed_at is not None:
            return None
        held.setdefault(row.consumer_uuid, []).append(row)
    found = {}
    for consumer in consumers:
        mine = held.get(consumer, ())
        if len({r.provider_id for r in mine}) != 1 or wanted != {
                r.resource_class: r.amount for r in mine}:
            return None
        found[consumer] = Claim(consumer, mine[0].provider_id, wanted,
                                host=mine[0].host)
    answer = [found[c] for c in consumers]
    # taking them over (the new stamp) only while the caller waits
    if call is not None:
        call.check_waited_for(consumers)
    if not _restamp(db, [r for c in consumers for r in held[c]], call):
        return None
    return answer


def _restamp(db, rows, call, now=None):
    """Stamp a repeat's claims anew (``created_at``, the token of
    ``scheduler.model.call``), so that the call they were first written for can
    no longer release them; False if one of them was released or
    confirmed meanwhile (plan the request anew)."""
    now = now or db.clock.now()
    try:
        with db.writer() as session:
            for row in rows:
                if not session.execute(
                        sa.update(ALLOC).where(
                            ALLOC.c.id == row.id,
                            ALLOC.c.created_at == row.created_at,
                            ALLOC.c.confirmed_at.is_(None))
                        .values(created_at=now)).rowcount:
                    raise _Moved()
    except _Moved:
        return False
    if call is not None:
        call.wrote({(r.consumer_uuid, r.provider_id) for r in rows}, now)
    return True


class _Moved(Exception):
    """A held claim changed under a repeat (rolls its restamp back)."""


@db_api.retry_on_deadlock
def release_written(db, written):
    """Give back the claims of a call whose caller never got the answer
    (``scheduler.model.call.Written`` items): each only while it is unconfirmed
    and still carries the stamp it was written with (a repeated request
    answered with it since stamped it anew). Returns how many rows."""
    if not written:
        return 0
    query = sa.select(ALLOC).where(
        sa.or_(*[sa.and_(ALLOC.c.consumer_uuid == w.consumer_uuid,
                         ALLOC.c.provider_id == w.provider_id,
                         ALLOC.c.created_at == w.created_at)
                 for w in written]),
        ALLOC.c.confirmed_at.is_(None))
    with changes.write(db) as change:
        session = change.session
        if not session.execute(query).first():
            return 0
        touched = {w.provider_id for w in written}
        change.lock_providers(touched)
        rows = session.execute(query.with_for_update()).all()
        _release_rows(session, rows)
        _forget_members(session, {r.consumer_uuid for r in rows})
        change.providers(touched)
        return len(rows)


def list_allocations(db, host=None, consumer_uuid=None):
    """Claims as dicts (with the provider's host and node names)."""
    query = (sa.select(ALLOC, P.c.host, P.c.nodename, P.c.uuid
                       .label('provider_uuid'))
             .join(P, P.c.id == ALLOC.c.provider_id)
             .order_by(P.c.host, ALLOC.c.consumer_uuid,
                       ALLOC.c.resource_class))
    if host is not None:
        query = query.where(P.c.host == host)
    if consumer_uuid is not None:
        query = query.where(ALLOC.c.consumer_uuid == consumer_uuid)
    with db.reader() as session:
        return [dict(r._mapping) for r in session.execute(query)]
