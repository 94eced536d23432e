"""Aggregates pushed by their owner, and the changes workers pull.

``save_aggregates`` replaces each aggregate's name, hosts and metadata;
``delete_aggregate`` leaves a tombstone so workers notice; both record the
change in the feed (``scheduler.db.changes.write``) like every other write.

Order (``scheduler.db.send_order``): casts reach several threads and
workers in any order, so each write carries when its message was sent
(``stamp``, the caller's clock with microseconds, clamped to the
worker's) and a row only changes for a later stamp, compared and written
under the row's lock (aggregate rows before providers, whose ratios an
aggregate may set). An older update never undoes a newer one, and a
delete is not undone by an update sent before it (the tombstone keeps its
stamp, even for an unknown aggregate).
``load_aggregate_changes(since)`` returns what changed after feed position
``since``.
"""

import json

import sqlalchemy as sa

from scheduler.db import api as db_api
from scheduler.db import changes
from scheduler.db import models
from scheduler.db import send_order
from scheduler.db import ratios

AGG = models.aggregates


@db_api.retry_on_deadlock
def save_aggregates(db, aggregates, stamp=None):
    """Create or replace aggregates sent at ``stamp`` (clamped to the
    database's clock, ``db.clock``; default now); one already changed by
    a later message, or deleted by one, is left alone. Re-derive
    allocation ratios of the hosts that gain or lose a ratio-setting
    aggregate. Returns the uuids applied."""
    stamp = send_order.clamp(stamp, db.clock.now())
    latest = {agg.uuid: agg for agg in aggregates}
    with changes.write(db) as change:
        session = change.session
        rows = send_order.lock(session, AGG, latest)
        applied = [uuid for uuid in sorted(latest)
                   if send_order.is_newer(stamp, rows.get(uuid))]
        rerated = set()
        for uuid in applied:
            agg, row = latest[uuid], rows.get(uuid)
            metadata = agg.get('metadata', {})
            hosts = sorted(agg.get('hosts', []))
            send_order.write(session, AGG, uuid, row, {
                'name': agg.get('name'),
                'metadata_json': json.dumps(metadata, sort_keys=True),
                'hosts_json': json.dumps(hosts), 'deleted': False,
                'change_seq': 0, 'updated_at': stamp})
            rerated |= _ratio_hosts(row)
            if ratios.has_ratio(metadata):
                rerated.update(hosts)
        if applied:
            _stamp(change, applied,
                   ratios.recompute_hosts(db, change, rerated))
        return applied


def _ratio_hosts(row):
    """Hosts of this aggregate as stored (a locked row or None), if it
    sets a ratio."""
    if row is None or not ratios.has_ratio(json.loads(row.metadata_json)):
        return set()
    return set(json.loads(row.hosts_json))


def _stamp(change, uuids, provider_ids):
    """Record what changed; the feed stamps it just before COMMIT."""
    change.rows(AGG, AGG.c.uuid.in_(uuids))
    change.providers(provider_ids)


@db_api.retry_on_deadlock
def delete_aggregate(db, aggregate_uuid, stamp=None):
    """Tombstone an aggregate, as of ``stamp`` (clamped like a save's);
    returns False if it was unknown, already deleted or changed by a
    later message. The tombstone keeps ``stamp``, so an update sent
    before the delete but arriving after it does not bring the aggregate
    back; that of an unknown aggregate is not in the feed (workers never
    saw it)."""
    stamp = send_order.clamp(stamp, db.clock.now())
    with changes.write(db) as change:
        row = send_order.lock(change.session, AGG,
                              [aggregate_uuid]).get(aggregate_uuid)
        if not send_order.is_newer(stamp, row, ties=True):
            return False
        send_order.write(change.session, AGG, aggregate_uuid, row, {
            'deleted': True, 'hosts_json': '[]', 'metadata_json': '{}',
            'change_seq': 0, 'updated_at': stamp})
        if row is None or row.deleted:
            return False
        _stamp(change, [aggregate_uuid],
               ratios.recompute_hosts(db, change, _ratio_hosts(row)))
        return True


def load_aggregate_changes(db, since=None, until=None, connection=None):
    """Aggregates changed after ``since`` (all for None), as dicts with
    ``uuid``, ``name``, ``hosts``, ``metadata`` and ``deleted``; read
    through ``connection`` if given (the poller's), else a reader."""
    query = sa.select(AGG)
    if since is not None:
        query = query.where(changes.changed_after(AGG, since, until))
    if connection is not None:
        rows = connection.execute(query).all()
    else:
        with db.reader() as session:
            rows = session.execute(query).all()
    return [{'uuid': r.uuid, 'name': r.name, 'deleted': bool(r.deleted),
             'hosts': json.loads(r.hosts_json),
             'metadata': json.loads(r.metadata_json)} for r in rows]
