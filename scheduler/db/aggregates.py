"""Aggregates pushed by their owner, and the changes workers pull.

``save_aggregates`` replaces each aggregate's name, hosts and metadata;
``delete_aggregate`` leaves a tombstone so workers notice; both record the
change in the feed (``scheduler.db.changes.write``) like every other write.
``load_aggregate_changes(since)`` returns what changed after feed position
``since``.
"""

import json

import sqlalchemy as sa

from scheduler.db import api as db_api
from scheduler.db import changes
from scheduler.db import models
from scheduler.db import ratios

AGG = models.aggregates


@db_api.retry_on_deadlock
def save_aggregates(db, aggregates):
    """Create or replace aggregates; re-derive allocation ratios of the
    hosts that gain or lose a ratio-setting aggregate."""
    with changes.write(db) as change:
        session = change.session
        uuids = sorted(a.uuid for a in aggregates)
        rerated = _ratio_hosts(session, uuids)
        for agg in sorted(aggregates, key=lambda a: a.uuid):
            metadata = agg.get('metadata', {})
            hosts = sorted(agg.get('hosts', []))
            if ratios.has_ratio(metadata):
                rerated.update(hosts)
            values = {'name': agg.get('name'),
                      'metadata_json': json.dumps(metadata, sort_keys=True),
                      'hosts_json': json.dumps(hosts), 'deleted': False,
                      'change_seq': 0}
            updated = session.execute(sa.update(AGG).where(
                AGG.c.uuid == agg.uuid).values(**values)).rowcount
            if not updated:
                session.execute(sa.insert(AGG).values(uuid=agg.uuid,
                                                      **values))
        _stamp(change, uuids, ratios.recompute_hosts(db, change, rerated))


def _ratio_hosts(session, uuids):
    """Hosts of these aggregates as stored, if they set a ratio."""
    hosts = set()
    for row in session.execute(sa.select(AGG).where(AGG.c.uuid.in_(uuids))):
        if ratios.has_ratio(json.loads(row.metadata_json)):
            hosts.update(json.loads(row.hosts_json))
    return hosts


def _stamp(change, uuids, provider_ids):
    """Record what changed; the feed stamps it just before COMMIT."""
    change.rows(AGG, AGG.c.uuid.in_(uuids))
    change.providers(provider_ids)


@db_api.retry_on_deadlock
def delete_aggregate(db, aggregate_uuid):
    """Tombstone an aggregate; returns False if it was unknown."""
    with changes.write(db) as change:
        session = change.session
        rerated = _ratio_hosts(session, [aggregate_uuid])
        found = session.execute(sa.update(AGG).where(
            AGG.c.uuid == aggregate_uuid, AGG.c.deleted == sa.false())
            .values(deleted=True, hosts_json='[]', metadata_json='{}',
                    change_seq=0)).rowcount
        if found:
            _stamp(change, [aggregate_uuid],
                   ratios.recompute_hosts(db, change, rerated))
        return bool(found)


def load_aggregate_changes(db, since=None, until=None):
    """Aggregates changed after ``since`` (all for None), as dicts with
    ``uuid``, ``name``, ``hosts``, ``metadata`` and ``deleted``."""
    query = sa.select(AGG)
    if since is not None:
        query = query.where(changes.changed_after(AGG, since, until))
    with db.reader() as session:
        rows = session.execute(query).all()
    return [{'uuid': r.uuid, 'name': r.name, 'deleted': bool(r.deleted),
             'hosts': json.loads(r.hosts_json),
             'metadata': json.loads(r.metadata_json)} for r in rows]
