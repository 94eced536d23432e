"""Aggregates pushed by their owner, and the changes workers pull.

``save_aggregates`` replaces each aggregate's name, hosts and metadata;
``delete_aggregate`` leaves a tombstone so workers notice; both record the
change in the feed (``scheduler.db.changes.write``) like every other write.

Order: casts reach several threads and workers in any order, so each
write carries when its message was sent (``stamp``, the caller's clock with
microseconds) and a row only changes for a later stamp. An older update
never undoes a newer one, and a delete is not undone by an update sent
before it (the tombstone keeps its stamp, even for an unknown aggregate).
``load_aggregate_changes(since)`` returns what changed after feed position
``since``.
"""

import json

import sqlalchemy as sa
from oslo_utils import timeutils

from scheduler.db import api as db_api
from scheduler.db import changes
from scheduler.db import models
from scheduler.db import send_order
from scheduler.db import ratios

AGG = models.aggregates


@db_api.retry_on_deadlock
def save_aggregates(db, aggregates, stamp=None):
    """Create or replace aggregates sent at ``stamp`` (default now); one
    already changed by a later message, or deleted by one, is left alone.
    Re-derive allocation ratios of the hosts that gain or lose a
    ratio-setting aggregate. Returns the uuids applied."""
    stamp = stamp or timeutils.utcnow()
    with changes.write(db) as change:
        session = change.session
        uuids = sorted(a.uuid for a in aggregates)
        rerated = _ratio_hosts(session, uuids)
        applied = []
        for agg in sorted(aggregates, key=lambda a: a.uuid):
            metadata = agg.get('metadata', {})
            hosts = sorted(agg.get('hosts', []))
            values = {'name': agg.get('name'),
                      'metadata_json': json.dumps(metadata, sort_keys=True),
                      'hosts_json': json.dumps(hosts), 'deleted': False,
                      'change_seq': 0, 'updated_at': stamp}
            if send_order.write_if_newer(session, AGG, agg.uuid, values,
                                         stamp):
                applied.append(agg.uuid)
                if ratios.has_ratio(metadata):
                    rerated.update(hosts)
        if applied:
            _stamp(change, applied,
                   ratios.recompute_hosts(db, change, rerated))
        return applied




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
def delete_aggregate(db, aggregate_uuid, stamp=None):
    """Tombstone an aggregate, as of ``stamp`` (default now); returns
    False if it was unknown, already deleted or changed by a later
    message. The tombstone keeps ``stamp``, so an update sent before the
    delete but arriving after it does not bring the aggregate back."""
    stamp = stamp or timeutils.utcnow()
    with changes.write(db) as change:
        session = change.session
        rerated = _ratio_hosts(session, [aggregate_uuid])
        found = session.execute(sa.update(AGG).where(
            AGG.c.uuid == aggregate_uuid, AGG.c.deleted == sa.false(),
            send_order.newer(AGG, stamp)).values(
                deleted=True, hosts_json='[]', metadata_json='{}',
                change_seq=0, updated_at=stamp)).rowcount
        if found:
            _stamp(change, [aggregate_uuid],
                   ratios.recompute_hosts(db, change, rerated))
            return True
        # already deleted: only the tombstone's stamp moves forward
        if session.execute(sa.update(AGG).where(
                AGG.c.uuid == aggregate_uuid, AGG.c.deleted == sa.true(),
                send_order.newer(AGG, stamp)).values(
                    updated_at=stamp)).rowcount:
            return False
        # unknown: a tombstone workers need not see (change_seq 0)
        send_order.write_if_newer(session, AGG, aggregate_uuid, {
            'name': None, 'metadata_json': '{}', 'hosts_json': '[]',
            'deleted': True, 'change_seq': 0, 'updated_at': stamp}, stamp)
        return False


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
