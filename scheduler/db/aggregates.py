"""Aggregates pushed by their owner, and the changes workers pull.

``save_aggregates`` replaces each aggregate's name, hosts and metadata;
``delete_aggregate`` leaves a tombstone so workers notice; both stamp the
rows with the global change counter like every other write.
``load_aggregate_changes(since)`` returns what changed after ``since``.
"""

import json

import sqlalchemy as sa

from scheduler.db import api as db_api
from scheduler.db import models

AGG = models.aggregates


@db_api.retry_on_deadlock
def save_aggregates(db, aggregates):
    with db.writer() as session:
        seq = db_api.next_change_seq(session)
        for agg in sorted(aggregates, key=lambda a: a.uuid):
            values = {'name': agg.get('name'),
                      'metadata_json': json.dumps(agg.get('metadata', {}),
                                                  sort_keys=True),
                      'hosts_json': json.dumps(sorted(agg.get('hosts',
                                                              []))),
                      'deleted': False, 'change_seq': seq}
            updated = session.execute(sa.update(AGG).where(
                AGG.c.uuid == agg.uuid).values(**values)).rowcount
            if not updated:
                session.execute(sa.insert(AGG).values(uuid=agg.uuid,
                                                      **values))


@db_api.retry_on_deadlock
def delete_aggregate(db, aggregate_uuid):
    """Tombstone an aggregate; returns False if it was unknown."""
    with db.writer() as session:
        seq = db_api.next_change_seq(session)
        return bool(session.execute(sa.update(AGG).where(
            AGG.c.uuid == aggregate_uuid, AGG.c.deleted == sa.false())
            .values(deleted=True, hosts_json='[]', metadata_json='{}',
                    change_seq=seq)).rowcount)


def load_aggregate_changes(db, since=None):
    """Aggregates changed after ``since`` (all for None), as dicts with
    ``uuid``, ``name``, ``hosts``, ``metadata`` and ``deleted``."""
    query = sa.select(AGG)
    if since is not None:
        query = query.where(AGG.c.change_seq > since)
    with db.reader() as session:
        rows = session.execute(query).all()
    return [{'uuid': r.uuid, 'name': r.name, 'deleted': bool(r.deleted),
             'hosts': json.loads(r.hosts_json),
             'metadata': json.loads(r.metadata_json)} for r in rows]
