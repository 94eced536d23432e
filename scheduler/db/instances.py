"""Instances per host, as trackers report them.

``save_instances`` upserts what a host runs, ``delete_instance`` drops
one, ``prune_host`` drops those a host no longer reports (dropped rows stay
as tombstones, recorded in the change feed like every write, so
workers that keep instances in memory see them go:
``load_instance_changes``). The scheduler also reads them per request (the
hosts of given instances, for SameHost and DifferentHost), together with
claims not yet reported by any tracker.
"""

import json

import sqlalchemy as sa
from oslo_utils import timeutils

from scheduler.db import api as db_api
from scheduler.db import changes
from scheduler.db import models

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
    now = now or timeutils.utcnow()
    with changes.write(db) as change:
        session = change.session
        uuids = sorted(i.uuid for i in infos)
        for info in sorted(infos, key=lambda i: i.uuid):
            values = {'host': host, 'node': info.get('node'),
                      'project_id': info.get('project_id'),
                      'group_uuid': info.get('group_uuid'),
                      'attributes': _attributes(info), 'updated_at': now,
                      'deleted': False, 'change_seq': 0, 'feed_seq': 0}
            updated = session.execute(sa.update(INST).where(
                INST.c.uuid == info.uuid).values(**values)).rowcount
            if not updated:
                session.execute(sa.insert(INST).values(uuid=info.uuid,
                                                       **values))
        _stamp(change, INST.c.uuid.in_(uuids))


def _stamp(change, condition):
    # the rows this transaction wrote carry feed_seq 0 until stamped
    change.rows(INST, sa.and_(condition, INST.c.feed_seq == 0))


def _forget(db, condition):
    with changes.write(db) as change:
        forgotten = change.session.execute(
            sa.update(INST).where(condition, INST.c.deleted == sa.false())
            .values(deleted=True, change_seq=0, feed_seq=0)).rowcount
        if forgotten:
            _stamp(change, condition)
        return forgotten


def delete_instance(db, host, instance_uuid):
    return _forget(db, sa.and_(INST.c.uuid == instance_uuid,
                               INST.c.host == host))


def prune_host(db, host, keep_uuids):
    """Forget instances of ``host`` that are not in ``keep_uuids``."""
    condition = INST.c.host == host
    if keep_uuids:
        condition = sa.and_(condition,
                            INST.c.uuid.not_in(list(keep_uuids)))
    return _forget(db, condition)


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
