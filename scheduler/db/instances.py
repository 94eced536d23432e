"""Instances per host, as trackers report them.

``save_instances`` upserts what a host runs, ``delete_instance`` drops
one, ``prune_host`` drops those a host no longer reports (dropped rows stay
as tombstones, recorded in the change feed like every write, so
workers that keep instances in memory see them go:
``load_instance_changes``). The scheduler also reads them per request (the
hosts of given instances, for SameHost and DifferentHost), together with
claims not yet reported by any tracker.

Order (``scheduler.db.send_order``): each write carries when its message
was sent (the caller's clock, microseconds, clamped to the worker's) in
``updated_at``, and a row only changes for a later stamp, compared and
written under the row's lock: an older update never undoes a newer one,
and a delete (even of an instance not yet known, which leaves a
tombstone) is not undone by an update sent before it.
"""

import json

import sqlalchemy as sa

from scheduler.db import api as db_api
from scheduler.db import changes
from scheduler.db import models
from scheduler.db import send_order

INST = models.instances
ALLOC = models.allocations
P = models.providers


def _attributes(info):
    flavor = info.get('flavor')
    return json.dumps({
        'flavor': flavor.obj_to_primitive() if flavor is not None else None,
        'image_properties': info.get('image_properties', {}),
        'task_state': info.get('task_state'),
        'user_id': info.get('user_id'),
    }, sort_keys=True)



@db_api.retry_on_deadlock
def save_instances(db, host, infos, now=None):
    """Upsert what ``host`` runs, as of ``now`` (when the message was
    sent, clamped to the database's clock, ``db.clock``; default now);
    an instance changed or deleted by a later message is left alone.
    Returns the uuids applied."""
    now = send_order.clamp(now, db.clock.now())
    latest = {info.uuid: info for info in infos}
    with changes.write(db) as change:
        session = change.session
        rows = send_order.lock(session, INST, latest)
        applied = [uuid for uuid in sorted(latest)
                   if send_order.is_newer(now, rows.get(uuid))]
        for uuid in applied:
            info = latest[uuid]
            send_order.write(session, INST, uuid, rows.get(uuid), {
                'host': host, 'node': info.get('node'),
                'project_id': info.get('project_id'),
                'group_uuid': info.get('group_uuid'),
                'attributes': _attributes(info), 'updated_at': now,
                'deleted': False, 'change_seq': 0, 'feed_seq': 0})
        if applied:
            _stamp(change, INST.c.uuid.in_(applied))
        return applied


def _stamp(change, condition):
    # the rows this transaction wrote carry feed_seq 0 until stamped
    change.rows(INST, sa.and_(condition, INST.c.feed_seq == 0))


@db_api.retry_on_deadlock
def delete_instance(db, host, instance_uuid, stamp=None):
    """Forget one instance of ``host`` as of ``stamp`` (clamped like a
    save's); returns 1 if it ran there, else 0.

    Whatever the row, the delete's stamp is kept, so no update sent
    before it applies after it: an unknown instance gets a tombstone, a
    deleted one a later stamp, one reported on another host (by a later
    move) stays there, but an older report cannot bring it back here.
    """
    stamp = send_order.clamp(stamp, db.clock.now())
    with changes.write(db) as change:
        row = send_order.lock(change.session, INST,
                              [instance_uuid]).get(instance_uuid)
        if not send_order.is_newer(stamp, row, ties=True):
            return 0
        forgets = row is not None and not row.deleted and row.host == host
        if row is None or forgets:
            send_order.write(change.session, INST, instance_uuid, row, {
                'host': host, 'updated_at': stamp, 'deleted': True,
                'change_seq': 0, 'feed_seq': 0})
            _stamp(change, INST.c.uuid == instance_uuid)
        else:
            send_order.write(change.session, INST, instance_uuid, row,
                             {'updated_at': stamp})
        return int(forgets)


@db_api.retry_on_deadlock
def _forget(db, condition, stamp):
    # one conditional UPDATE: the compare and the write of each row in
    # one statement (rows not there yet are not the sync's to drop)
    with changes.write(db) as change:
        forgotten = change.session.execute(
            sa.update(INST).where(condition, INST.c.deleted == sa.false(),
                                  send_order.newer(INST, stamp, ties=True))
            .values(deleted=True, change_seq=0, feed_seq=0,
                    updated_at=stamp)).rowcount
        if forgotten:
            _stamp(change, condition)
        return forgotten


def prune_host(db, host, keep_uuids, stamp=None):
    """Forget instances of ``host`` that are not in ``keep_uuids`` and
    were not reported after ``stamp`` (when the sync was sent)."""
    condition = INST.c.host == host
    if keep_uuids:
        condition = sa.and_(condition,
                            INST.c.uuid.not_in(list(keep_uuids)))
    return _forget(db, condition, send_order.clamp(stamp, db.clock.now()))


def instances_on(db, host):
    with db.reader() as session:
        return [dict(r._mapping) for r in session.execute(
            sa.select(INST).where(INST.c.host == host,
                                  INST.c.deleted == sa.false())
            .order_by(INST.c.uuid))]


def load_instance_changes(db, since=None, until=None):
    """Instances changed after ``since`` (all live ones for None) as
    ``(uuid, host, image_properties, deleted)`` tuples."""
    query = sa.select(INST.c.uuid, INST.c.host, INST.c.attributes,
                      INST.c.deleted)
    if since is None:
        query = query.where(INST.c.deleted == sa.false())
    else:
        query = query.where(changes.changed_after(INST, since, until))
    with db.reader() as session:
        rows = session.execute(query).all()
    return [(r.uuid, r.host,
             json.loads(r.attributes or '{}').get('image_properties') or {},
             bool(r.deleted)) for r in rows]


def hosts_of(db, instance_uuids):
    """Hosts running or holding claims for any of ``instance_uuids``."""
    uuids = list(instance_uuids)
    if not uuids:
        return set()
    with db.reader() as session:
        reported = session.execute(sa.select(INST.c.host).where(
            INST.c.uuid.in_(uuids), INST.c.deleted == sa.false())
        ).scalars().all()
        claimed = session.execute(
            sa.select(P.c.host).join(ALLOC, ALLOC.c.provider_id == P.c.id)
            .where(ALLOC.c.consumer_uuid.in_(uuids))).scalars().all()
    return {h for h in list(reported) + list(claimed) if h}


def count_by_host(db, instance_uuids):
    """host -> how many of ``instance_uuids`` trackers report on it."""
    uuids = list(instance_uuids)
    if not uuids:
        return {}
    with db.reader() as session:
        rows = session.execute(
            sa.select(INST.c.host, sa.func.count(INST.c.uuid.distinct()))
            .where(INST.c.uuid.in_(uuids), INST.c.deleted == sa.false())
            .group_by(INST.c.host)).all()
    return {host: count for host, count in rows if host}
