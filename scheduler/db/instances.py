"""Instances per host, as trackers report them.

``save_instances`` upserts what a host runs, ``delete_instance`` drops
one, ``prune_host`` drops those a host no longer reports. The scheduler
reads them per request (the hosts of given instances, for SameHost and
DifferentHost), together with claims not yet reported by any tracker.
"""

import json

import sqlalchemy as sa
from oslo_utils import timeutils

from scheduler.db import api as db_api
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
    with db.writer() as session:
        for info in sorted(infos, key=lambda i: i.uuid):
            values = {'host': host, 'node': info.get('node'),
                      'project_id': info.get('project_id'),
                      'group_uuid': info.get('group_uuid'),
                      'attributes': _attributes(info), 'updated_at': now}
            updated = session.execute(sa.update(INST).where(
                INST.c.uuid == info.uuid).values(**values)).rowcount
            if not updated:
                session.execute(sa.insert(INST).values(uuid=info.uuid,
                                                       **values))


def delete_instance(db, host, instance_uuid):
    with db.writer() as session:
        return session.execute(sa.delete(INST).where(
            INST.c.uuid == instance_uuid, INST.c.host == host)).rowcount


def prune_host(db, host, keep_uuids):
    """Forget instances of ``host`` that are not in ``keep_uuids``."""
    with db.writer() as session:
        query = sa.delete(INST).where(INST.c.host == host)
        if keep_uuids:
            query = query.where(INST.c.uuid.not_in(list(keep_uuids)))
        return session.execute(query).rowcount


def instances_on(db, host):
    with db.reader() as session:
        return [dict(r._mapping) for r in session.execute(
            sa.select(INST).where(INST.c.host == host)
            .order_by(INST.c.uuid))]


def hosts_of(db, instance_uuids):
    """Hosts running or holding claims for any of ``instance_uuids``."""
    uuids = list(instance_uuids)
    if not uuids:
        return set()
    with db.reader() as session:
        reported = session.execute(sa.select(INST.c.host).where(
            INST.c.uuid.in_(uuids))).scalars().all()
        claimed = session.execute(
            sa.select(P.c.host).join(ALLOC, ALLOC.c.provider_id == P.c.id)
            .where(ALLOC.c.consumer_uuid.in_(uuids))).scalars().all()
    return {h for h in list(reported) + list(claimed) if h}
