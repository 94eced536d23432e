"""Providers and their inventories: writes from trackers, reads by workers.

``record_compute_node`` applies one tracker report: it creates or updates the
provider and its inventories in one transaction, bumps its generation and
change_seq, and ignores reports older than the one already stored, so a
report delivered twice or out of order never moves a host back in time.

``load_changes(since)`` returns providers changed after change_seq
``since`` (all of them for ``since=None``) with their inventories, as plain
dicts ready for the in-memory host table.
"""

import datetime
import json

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils

from scheduler import resource_classes as rcs
from scheduler.db import api as db_api
from scheduler.db import models
from scheduler.db import ratios

P = models.providers
INV = models.inventories

# ComputeNode fields stored in their own columns or as inventories; the
# rest go to the JSON ``attributes`` column.
_COLUMN_FIELDS = {'uuid', 'host', 'hypervisor_hostname', 'disabled',
                  'availability_zone', 'updated_at'}


def _naive_utc(value):
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


def inventories_from_node(node, defaults):
    """Inventory rows (per resource class) described by a ComputeNode.

    ``defaults`` maps resource class to the allocation ratio used when the
    node reports none (or 0.0).
    """
    def ratio(field, rc):
        value = node.get(field)
        return value if value else defaults[rc]

    specs = {
        rcs.VCPU: (node.vcpus, node.reserved_host_cpus, node.vcpus_used,
                   ratio('cpu_allocation_ratio', rcs.VCPU)),
        rcs.MEMORY_MB: (node.memory_mb, node.reserved_host_memory_mb,
                        node.memory_mb_used,
                        ratio('ram_allocation_ratio', rcs.MEMORY_MB)),
        rcs.DISK_GB: (node.local_gb, node.reserved_host_disk_mb // 1024,
                      node.local_gb_used,
                      ratio('disk_allocation_ratio', rcs.DISK_GB)),
    }
    # dedicated CPUs are claimed like any class; never overcommitted
    pcpus, pinned = rcs.dedicated_cpus(node.get('numa_topology'))
    if pcpus:
        specs[rcs.PCPU] = (pcpus, 0, pinned, 1.0)
    rows = {}
    for rc, (total, reserved, used, alloc_ratio) in specs.items():
        rows[rc] = {
            'resource_class': rc, 'total': total, 'reserved': reserved,
            'min_unit': 1, 'max_unit': max(total, 0), 'step_size': 1,
            'allocation_ratio': float(alloc_ratio),
            'reported_ratio': float(alloc_ratio),
            'capacity': ratios.capacity(total, reserved, alloc_ratio),
            'reported_used': used,
        }
    return rows


def _attributes(node):
    values = {}
    for name in node.fields:
        if name in _COLUMN_FIELDS or not node.obj_attr_is_set(name):
            continue
        values[name] = node.fields[name].to_primitive(
            node, name, getattr(node, name))
    return json.dumps(values, sort_keys=True)


def record_compute_node(db, node, ratio_defaults, now=None):
    """Persist a tracker report; returns False if it was older than stored.

    Retried on deadlock and on a lost insert race (two workers seeing the
    same new host at once), whose loser becomes an update.
    """
    return record_compute_nodes(db, [node], ratio_defaults, now) == 1


@db_api.retry_on_deadlock
def record_compute_nodes(db, nodes, ratio_defaults, now=None):
    """Persist several reports in one transaction (one change-counter
    bump for all); returns how many were newer than what was stored."""
    now = now or timeutils.utcnow()
    try:
        with db.writer() as session:
            changed = []
            for node in sorted(nodes, key=lambda n: (n.host, n.nodename)):
                reported_at = _naive_utc(node.get('updated_at')) or now
                provider_id = _record(session, node, reported_at,
                                      ratio_defaults, now)
                if provider_id is not None:
                    changed.append(provider_id)
            if changed:
                seq = db_api.next_change_seq(session)
                session.execute(sa.update(P).where(P.c.id.in_(changed))
                                .values(change_seq=seq))
            return len(changed)
    except db_exc.DBDuplicateEntry:
        raise db_exc.RetryRequest(db_exc.DBDuplicateEntry())


def _record(session, node, reported_at, ratio_defaults, now):
    """Write one report (no counter bump); its provider id, or None if
    the report is older than the stored one."""
    # Lock the row by primary key only once it is known to exist: on
    # MySQL/MariaDB a locking read of a missing row takes a gap lock, and
    # workers inserting different new hosts deadlock on each other's gaps.
    row = session.execute(
        sa.select(P.c.id)
        .where(P.c.host == node.host, P.c.nodename == node.nodename)).first()
    if row is not None:
        row = session.execute(
            sa.select(P.c.id, P.c.reported_at).where(P.c.id == row.id)
            .with_for_update()).first()
    values = {
        **_failed_builds(node),
        'disabled': bool(node.disabled),
        'availability_zone': node.get('availability_zone'),
        'reported_at': reported_at,
        'attributes': _attributes(node),
    }
    if row is None:
        provider_id = session.execute(sa.insert(P).values(
            uuid=node.get('uuid') or uuidutils.generate_uuid(),
            host=node.host, nodename=node.nodename, kind='compute',
            generation=0, change_seq=0, created_at=now,
            **values)).inserted_primary_key[0]
    elif row.reported_at is not None and reported_at <= row.reported_at:
        return None
    else:
        provider_id = row.id
        session.execute(sa.update(P).where(P.c.id == provider_id).values(
            generation=P.c.generation + 1, **values))
    inventories = inventories_from_node(node, ratio_defaults)
    ratios.apply_overrides(inventories, ratios.aggregate_ratios(
        session, [node.host]).get(node.host, {}))
    _write_inventories(session, provider_id, inventories, new=row is None)
    return provider_id


def _failed_builds(node):
    """A tracker may reset (or set) the failed-build count in its stats."""
    value = node.get('stats', {}).get('failed_builds')
    try:
        return {'failed_builds': max(int(value), 0)}
    except (TypeError, ValueError):
        return {}


@db_api.retry_on_deadlock
def record_build_failure(db, host, node=None):
    """Count one failed build on ``host`` (all its nodes if no node)."""
    with db.writer() as session:
        query = sa.select(P.c.id).where(P.c.host == host)
        if node:
            query = query.where(P.c.nodename == node)
        ids = sorted(session.execute(query).scalars().all())
        for provider_id in ids:
            session.execute(sa.update(P).where(P.c.id == provider_id)
                            .values(failed_builds=P.c.failed_builds + 1))
        if ids:
            seq = db_api.next_change_seq(session)
            session.execute(sa.update(P).where(P.c.id.in_(ids))
                            .values(change_seq=seq))
        return len(ids)


def _write_inventories(session, provider_id, inventories, new=False):
    for rc, inv in sorted(inventories.items()):
        # (no UPDATE of rows that cannot exist yet: a gap lock again)
        updated = not new and session.execute(
            sa.update(INV).where(INV.c.provider_id == provider_id,
                                 INV.c.resource_class == rc)
            .values(**inv)).rowcount
        if not updated:
            session.execute(sa.insert(INV).values(
                provider_id=provider_id, claimed=0, **inv))


def load_changes(db, since=None, provider_ids=None):
    """Providers changed after ``since`` (or those in ``provider_ids``).

    Returns ``(providers, max_seq)``: a list of dicts with an
    ``inventories`` dict per resource class, and the highest change_seq
    among them (``since`` if none changed).
    """
    query = sa.select(P.c.id, P.c.uuid, P.c.host, P.c.nodename,
                      P.c.generation, P.c.change_seq, P.c.disabled,
                      P.c.availability_zone, P.c.reported_at,
                      P.c.attributes, P.c.failed_builds)
    if provider_ids is not None:
        query = query.where(P.c.id.in_(list(provider_ids)))
    elif since is not None:
        query = query.where(P.c.change_seq > since)
    with db.reader() as session:
        rows = [dict(r._mapping) for r in session.execute(query)]
        by_id = {r['id']: r for r in rows}
        for r in rows:
            r['inventories'] = {}
        if rows:
            inv_query = sa.select(INV)
            if provider_ids is not None or since is not None:
                inv_query = inv_query.where(
                    INV.c.provider_id.in_(list(by_id)))
            for inv in session.execute(inv_query):
                owner = by_id.get(inv.provider_id)
                if owner is not None:
                    owner['inventories'][inv.resource_class] = \
                        dict(inv._mapping)
    max_seq = max((r['change_seq'] for r in rows), default=since)
    return rows, max_seq


def find_provider(db, name):
    """The provider row whose host (or nodename) is ``name``, or None."""
    with db.reader() as session:
        row = session.execute(sa.select(P).where(
            sa.or_(P.c.host == name, P.c.nodename == name))
            .order_by(P.c.id)).first()
        return dict(row._mapping) if row else None


def list_providers(db):
    rows, _ = load_changes(db)
    return sorted(rows, key=lambda r: (r['host'], r['nodename']))
