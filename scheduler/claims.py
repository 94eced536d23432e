"""Atomic claims against the database: the race fix.

Phase one of scheduling picks hosts from memory without locks; phase two,
here, writes the claims in one transaction that re-checks capacity in SQL:

    UPDATE inventories SET claimed = claimed + :amount
     WHERE provider_id = :p AND resource_class = :rc
       AND claimed + :amount <= capacity
       AND reported_used + :amount <= capacity ...

Usage is the larger of what the tracker reported and what claims add up
to, so both sums are checked. Zero rows updated means another worker took
the capacity (or a report shrank it): the whole transaction rolls back and
``ClaimConflict`` names the provider, so a request for N instances gets
either all N claims or none.

Lock order in every writer is providers (ascending id) -> inventories ->
change_counter, the same as ``scheduler.db.providers``; deadlocks that the
database still reports are retried by ``wrap_db_retry``.
"""

import collections
import dataclasses
import datetime

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import timeutils

from scheduler import exception
from scheduler.db import api as db_api
from scheduler.db import models

P = models.providers
INV = models.inventories
ALLOC = models.allocations
GROUPS = models.instance_groups
GM = models.group_members


@dataclasses.dataclass(frozen=True)
class Claim:
    """Resources one consumer takes from one provider (on ``host``)."""

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


def _lock_providers(session, provider_ids):
    for provider_id in sorted(provider_ids):
        locked = session.execute(
            sa.update(P).where(P.c.id == provider_id)
            .values(generation=P.c.generation + 1)).rowcount
        if not locked:
            raise exception.ClaimConflict(provider=provider_id,
                                          resource_class='(deleted)')


def _stamp_change(session, provider_ids):
    if provider_ids:
        seq = db_api.next_change_seq(session)
        session.execute(sa.update(P).where(P.c.id.in_(list(provider_ids)))
                        .values(change_seq=seq))


def _release_rows(session, rows):
    for row in rows:
        session.execute(
            sa.update(INV).where(INV.c.provider_id == row.provider_id,
                                 INV.c.resource_class == row.resource_class)
            .values(claimed=sa.case(
                (INV.c.claimed > row.amount, INV.c.claimed - row.amount),
                else_=0)))
    if rows:
        session.execute(sa.delete(ALLOC).where(
            ALLOC.c.id.in_([r.id for r in rows])))


def _allocations_of(session, consumers, lock=False):
    query = sa.select(ALLOC).where(ALLOC.c.consumer_uuid.in_(consumers))
    if lock:
        query = query.with_for_update()
    return session.execute(query).all()


@db_api.retry_on_deadlock
def claim_resources(db, claims, now=None, group=None):
    """Write every claim or none; raise ClaimConflict if one doesn't fit.

    Claims already held by the same consumers are replaced (a reschedule
    moves the claim to the new host). With a hard server-group ``group``
    (a ``GroupPolicy``), the group's row is locked first and the policy is
    checked against the members already placed, so concurrent requests
    of one group can't break it (``GroupPolicyConflict``).
    """
    now = now or timeutils.utcnow()
    consumers = sorted({c.consumer_uuid for c in claims})
    with db.writer() as session:
        if group is not None:
            _lock_group(session, group)
            _enforce_group(session, group, claims, now)
        previous = _allocations_of(session, consumers)
        touched = {c.provider_id for c in claims}
        touched |= {r.provider_id for r in previous}
        _lock_providers(session, touched)
        if previous:
            # re-read under the provider locks: a concurrent release may
            # have taken some of them already
            _release_rows(session, _allocations_of(session, consumers,
                                                   lock=True))
        for provider_id, resources in _per_provider(claims).items():
            _take(session, provider_id, resources)
        session.execute(sa.insert(ALLOC), [
            {'consumer_uuid': c.consumer_uuid, 'provider_id': c.provider_id,
             'resource_class': rc, 'amount': amount, 'created_at': now,
             'confirmed_at': None}
            for c in claims for rc, amount in sorted(c.resources.items())])
        _stamp_change(session, touched)


def _lock_group(session, group):
    locked = session.execute(
        sa.update(GROUPS).where(GROUPS.c.uuid == group.group_uuid)
        .values(generation=GROUPS.c.generation + 1)).rowcount
    if not locked:
        try:
            with session.begin_nested():
                session.execute(sa.insert(GROUPS).values(
                    uuid=group.group_uuid, policy=group.policy,
                    generation=0))
        except db_exc.DBDuplicateEntry:
            # another worker created it first: start over and lock it
            raise db_exc.RetryRequest(exception.ClaimConflict(
                provider='(group %s)' % group.group_uuid,
                resource_class='-'))


def _enforce_group(session, group, claims, now):
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


def _take(session, provider_id, resources):
    """One conditional UPDATE for all classes of one provider."""
    resources = {rc: amount for rc, amount in resources.items() if amount}
    if not resources:
        return
    amount = sa.case(*[(INV.c.resource_class == rc, amount)
                       for rc, amount in sorted(resources.items())],
                     else_=0)
    taken = session.execute(
        sa.update(INV).where(
            INV.c.provider_id == provider_id,
            INV.c.resource_class.in_(sorted(resources)),
            INV.c.claimed + amount <= INV.c.capacity,
            INV.c.reported_used + amount <= INV.c.capacity,
            INV.c.min_unit <= amount,
            INV.c.max_unit >= amount)
        .values(claimed=INV.c.claimed + amount)
        .execution_options(synchronize_session=False)).rowcount
    if taken != len(resources):
        raise exception.ClaimConflict(
            provider=provider_id,
            resource_class=_short_class(session, provider_id, resources))


def _short_class(session, provider_id, resources):
    """Which class did not fit (for the error only; the rare path)."""
    rows = {r.resource_class: r for r in session.execute(
        sa.select(INV).where(INV.c.provider_id == provider_id))}
    for rc, amount in sorted(resources.items()):
        row = rows.get(rc)
        if (row is None or max(row.claimed, row.reported_used) + amount
                > row.capacity or not row.min_unit <= amount
                <= row.max_unit):
            return rc
    return ', '.join(sorted(resources))


@db_api.retry_on_deadlock
def delete_allocations(db, consumer_uuid):
    """Release every claim of ``consumer_uuid``; returns how many rows.

    Idempotent: releasing a consumer with no claims does nothing.
    """
    with db.writer() as session:
        rows = _allocations_of(session, [consumer_uuid])
        if not rows:
            return 0
        touched = {r.provider_id for r in rows}
        _lock_providers(session, touched)
        rows = _allocations_of(session, [consumer_uuid], lock=True)
        _release_rows(session, rows)
        _forget_members(session, [consumer_uuid])
        _stamp_change(session, touched)
        return len(rows)


@db_api.retry_on_deadlock
def sync_host_consumers(db, host, instance_uuids, grace_seconds, now=None):
    """Reconcile the claims on ``host`` with the instances it really runs.

    Claims of reported instances are confirmed; claims of consumers the
    host does not report and older than ``grace_seconds`` are released.
    Returns ``(confirmed, released)`` row counts.
    """
    now = now or timeutils.utcnow()
    cutoff = now - datetime.timedelta(seconds=grace_seconds)
    running = set(instance_uuids)
    with db.writer() as session:
        provider_ids = session.execute(
            sa.select(P.c.id).where(P.c.host == host)).scalars().all()
        if not provider_ids:
            return 0, 0
        _lock_providers(session, provider_ids)
        rows = session.execute(sa.select(ALLOC).where(
            ALLOC.c.provider_id.in_(provider_ids)).with_for_update()).all()
        confirm = [r.id for r in rows
                   if r.consumer_uuid in running and r.confirmed_at is None]
        stale = [r for r in rows if r.consumer_uuid not in running
                 and r.created_at <= cutoff]
        if confirm:
            session.execute(sa.update(ALLOC).where(ALLOC.c.id.in_(confirm))
                            .values(confirmed_at=now))
        _release_rows(session, stale)
        _forget_members(session, {r.consumer_uuid for r in stale})
        _stamp_change(session, provider_ids if stale else ())
        return len(confirm), len(stale)


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
