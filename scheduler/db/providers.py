"""Providers and their inventories as trackers report them: the writes.

``record_compute_node`` applies one tracker report: it creates or updates the
provider and its inventories in one transaction, under the one provider
lock (``Change.lock_providers``, which bumps its generation), records the
change in the feed (``scheduler.db.changes``; on PostgreSQL the providers'
UPDATE is the feed's stamp, ``Change.update_providers``), and ignores
reports older than the one already stored, so a report delivered twice or
out of order never moves a host back in time. A report that repeats what
is stored is not written at all (``record_compute_nodes``).

A report is ordered by its ``updated_at``, clamped to the database's
clock (``report_time``, ``scheduler.db.clock``), so a tracker whose clock
runs ahead cannot freeze its host: the next report, stamped by a correct
clock, still wins.

A batch that registered new hosts has the planner's statistics of the
provider tables brought up to date when they fell behind
(``scheduler.db.statistics``, PostgreSQL).

``record_build_failure`` counts a failed build on a host's providers
(the BuildFailureWeigher reads the count). Workers read providers
through ``scheduler.db.provider_reads``.
"""

import datetime
import functools
import json

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import uuidutils
from oslo_versionedobjects import fields as ovo_fields

from scheduler.model import generic_inventory
from scheduler.model import resource_classes as rcs
from scheduler.db import api as db_api
from scheduler.db import changes
from scheduler.db import models
from scheduler.db import ratios
from scheduler.db import rows_update
from scheduler.db import send_order
from scheduler.db import statistics

LOG = logging.getLogger(__name__)
P = models.providers
INV = models.inventories

# ComputeNode fields stored in their own columns or as inventories; the
# rest (traits and locality of a generic report too) go to the JSON
# ``attributes`` column.
_COLUMN_FIELDS = {'uuid', 'host', 'hypervisor_hostname', 'disabled',
                  'availability_zone', 'updated_at', 'kind', 'inventories',
                  'used'}


_LABEL_FIELDS = ('traits', 'locality')


def _naive_utc(value):
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return value


def report_time(node, now=None):
    """When the report ``node`` was made, for ordering reports: its
    ``updated_at`` (naive UTC), clamped to ``now`` (the database's clock,
    ``db.clock.now()``; default this host's) if ahead or missing
    (``send_order.clamp``): a tracker's clock ahead never makes later
    reports look older."""
    return send_order.clamp(_naive_utc(node.get('updated_at')), now)


def inventories_from_node(node, defaults):
    """Inventory rows (per resource class) described by a ComputeNode.

    ``defaults`` maps resource class to the allocation ratio used when the
    node reports none (or 0.0). A generic report's ``inventories`` add to
    (and override) these (``scheduler.model.generic_inventory``).
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
            'capacity': generic_inventory.capacity(total, reserved,
                                                   alloc_ratio),
            'reported_used': used,
        }
    return generic_inventory.inventory_rows(node, rows)


def _attributes(node):
    """The JSON text of ``node``'s fields stored in the ``attributes``
    column, built once per ``absorb_reports`` call (the unchanged check
    and the write both compare or store it)."""
    text = node.__dict__.get(_ATTRIBUTES_TEXT)
    if text is None:
        values = {}
        for name, attr, field, label in _attribute_fields(type(node)):
            try:
                value = getattr(node, attr)
            except AttributeError:
                continue    # not set
            if label and not value:
                # no traits, no locality: left out, so workers need not
                # decode the row's JSON to label it
                # (scheduler.host_state.table)
                continue
            values[name] = value if field is None else field.to_primitive(
                node, name, value)
        text = node.__dict__[_ATTRIBUTES_TEXT] = json.dumps(values,
                                                            sort_keys=True)
    return text


#: where ``_attributes`` keeps its text on a node for one batch
_ATTRIBUTES_TEXT = '_attributes_text'


@functools.lru_cache(maxsize=None)
def _attribute_fields(cls):
    """(name, stored attribute, field or None, is a label) of the fields of
    object class ``cls`` kept in ``attributes``; the field is None where
    its value is its own primitive (``to_primitive`` is the identity:
    integers, strings, booleans, floats), so it is written as it is."""
    plan = []
    for name, field in cls.fields.items():
        if name in _COLUMN_FIELDS:
            continue
        as_is = (type(field).to_primitive is ovo_fields.Field.to_primitive
                 and type(field._type).to_primitive is
                 ovo_fields.FieldType.to_primitive)
        plan.append((name, '_obj_' + name, None if as_is else field,
                     name in _LABEL_FIELDS))
    return tuple(plan)


def record_compute_node(db, node, ratio_defaults, now=None,
                        fresh_for=None):
    """Persist a tracker report; returns False if it was older than stored.

    Retried on deadlock and on a lost insert race (two workers seeing the
    same new host at once), whose loser becomes an update.
    """
    return record_compute_nodes(db, [node], ratio_defaults, now,
                                fresh_for) == 1


def record_compute_nodes(db, nodes, ratio_defaults, now=None,
                         fresh_for=None):
    """Persist several reports in one transaction; returns how many were
    not older than what was stored (written, or unchanged: below)."""
    return sum(absorb_reports(db, nodes, ratio_defaults, now, fresh_for))


@db_api.retry_on_deadlock
def absorb_reports(db, nodes, ratio_defaults, now=None, fresh_for=None):
    """Persist several reports in one transaction; returns ``(written,
    unchanged)``: reports written, and reports that needed no write
    (older ones, ignored, are in neither).

    A report that changes nothing a filter or weigher reads (same
    attributes, zone, state, inventories and usage) is not written at all,
    unless the stored report is ``fresh_for`` seconds older than it (the
    ComputeFilter reads that time: hosts stay up). ``fresh_for=None``
    writes every report.
    """
    now = now or db.clock.now()
    for node in nodes:
        node.__dict__.pop(_ATTRIBUTES_TEXT, None)   # a node changed since
    stamped = _newest_per_node((node, report_time(node, now))
                               for node in nodes)
    skipped, todo, read = _skip_unchanged(db, stamped, ratio_defaults,
                                          fresh_for)
    if not todo:
        return 0, skipped
    try:
        with changes.write(db) as change:
            written, inserted = _record_all(db, change, todo,
                                            ratio_defaults, now, read)
            change.left_to_poller = True
    except db_exc.DBDuplicateEntry:
        raise db_exc.RetryRequest(db_exc.DBDuplicateEntry())
    if inserted:
        statistics.after_growth(db)
    return len(written), skipped


def _newest_per_node(stamped):
    """One (report, time) per (host, nodename): the newest, the later one
    of the batch on a tie. A batch's statements then touch each row once
    (an UPDATE joined to two rows of one provider would apply either)."""
    newest = {}
    for node, at in stamped:
        key = (node.host, node.nodename)
        if key not in newest or at >= newest[key][1]:
            newest[key] = (node, at)
    return list(newest.values())


# what a report must repeat, per inventory, to change nothing
_INVENTORY_KEYS = ('total', 'reserved', 'min_unit', 'max_unit',
                   'step_size', 'reported_ratio', 'reported_used')


class _Read:
    """What was stored before the write began, read without a lock:
    ``rows`` the providers by (host, nodename), ``inventories`` their
    inventory rows by provider id and class."""

    def __init__(self, rows, inventories):
        self.rows = rows
        self.inventories = inventories

    def still_current(self, locked):
        """The providers (ids) whose inventories read here are still the
        stored ones: ``locked`` maps the providers locked to the generation
        the lock gave them (on PostgreSQL, the one its stamp will give
        them), and every write of a provider or its inventories
        bumps it once, under that lock; so a lock that moved it by one
        found nothing written since this read. The providers were read
        before their inventories (in autocommit on PostgreSQL, each its
        own snapshot), so the inventories are never older than the
        generation: a write between the two reads makes the lock move it
        by two, and the inventories are read again."""
        return {row.id for row in self.rows.values()
                if locked.get(row.id) == row.generation + 1}


# built once: executing the same statement object reuses its compiled
# form (a statement built per batch cost its cache key's walk each time)
_STORED_OF_HOSTS = sa.select(P).where(
    P.c.host.in_(sa.bindparam('hosts', expanding=True)))


def _skip_unchanged(db, stamped, ratio_defaults, fresh_for):
    """Split reports into (how many are unchanged, the others to write,
    a ``_Read`` of what is stored or None): unchanged means repeating what
    is stored, stored recently enough (older ones are left to
    ``_record_all``, which ignores them). One read for the batch on a Core
    connection (no ORM session; autocommit on PostgreSQL), no lock: a
    report of one host is never written concurrently with another of the
    same host by this worker, and one of another worker would be as old as
    the stored one. The write reuses the read (``_Read.still_current``)."""
    if fresh_for is None or not stamped:
        return 0, stamped, None
    with db.connection() as session:
        stored = {(r.host, r.nodename): r for r in session.execute(
            _STORED_OF_HOSTS, {'hosts': sorted({n.host for n, _ in stamped})})}
        inventories = {}
        for inv in session.execute(_STORED_INVENTORIES, {
                'ids': [r.id for r in stored.values()]}):
            inventories.setdefault(inv.provider_id, {})[
                inv.resource_class] = inv
    skipped, todo = 0, []
    for node, reported_at in stamped:
        row = stored.get((node.host, node.nodename))
        if (row is not None and row.reported_at is not None
                and row.reported_at < reported_at
                and (reported_at - row.reported_at).total_seconds()
                < fresh_for and _same(row, inventories.get(row.id, {}),
                                      node, ratio_defaults)):
            skipped += 1
        else:
            todo.append((node, reported_at))
    return skipped, todo, _Read(stored, inventories)


def _same(row, stored_inventories, node, ratio_defaults):
    """Does the report repeat what is stored (all that plugins read)?"""
    failed = _failed_builds(node).get('failed_builds', row.failed_builds)
    if ((bool(node.disabled), node.get('availability_zone'), failed,
         _attributes(node), _kind(node)) != (
             bool(row.disabled), row.availability_zone, row.failed_builds,
             row.attributes, row.kind)):
        return False
    wanted = inventories_from_node(node, ratio_defaults)
    if set(wanted) - set(stored_inventories) or not all(
            _is_withdrawn(stored_inventories[rc])
            for rc in set(stored_inventories) - set(wanted)):
        return False
    return all(wanted[rc][key] == getattr(stored_inventories[rc], key)
               for rc in wanted for key in _INVENTORY_KEYS)


def _record_all(db, change, todo, ratio_defaults, now, read=None):
    """Write the reports of a batch: the ids of the providers written,
    and whether any was new (inserted).

    A bounded number of statements for the batch (the providers' ids and
    stored report times unless ``read`` has them, their lock, the
    aggregates' ratio overrides, one statement each for the providers and
    inventories already stored (``RowsUpdate``), one multi-row INSERT
    each for new providers and their inventories).
    Reports older than the stored one are ignored, and their providers
    are not locked: a lock bumps the generation, which moves only with a
    change. Every provider locked is recorded in the feed. ``read``: what
    ``_skip_unchanged`` read, if it did (no second read of the providers,
    and of the inventories of providers nobody wrote since).
    """
    session = change.session
    hosts = sorted({node.host for node, _ in todo})
    # Lock rows by primary key only, once they are known to exist: on
    # MySQL/MariaDB a locking read of a missing row takes a gap lock, and
    # workers inserting different new hosts deadlock on each other's gaps.
    found = read.rows if read is not None else {
        (r.host, r.nodename): r for r in session.execute(
            sa.select(P.c.id, P.c.host, P.c.nodename, P.c.reported_at)
            .where(P.c.host.in_(hosts)))}
    newer = {found[(node.host, node.nodename)].id for node, at in todo
             if _is_newer(at, found.get((node.host, node.nodename)))}
    locked = change.lock_providers(
        newer, columns=('reported_at', 'generation')).rows
    stored = {row.id: row.reported_at for row in locked}
    change.providers(stored)
    overrides = ratios.overrides(db, session, hosts)
    new, updates = [], []
    for node, reported_at in sorted(
            todo, key=lambda t: (t[0].host, t[0].nodename)):
        row = found.get((node.host, node.nodename))
        if row is None or (row.id in newer and row.id not in stored):
            # unknown, or gone since it was read
            new.append((node, reported_at))
        elif row.id in stored and (stored[row.id] is None
                                   or reported_at > stored[row.id]):
            updates.append((row.id, node, reported_at))
    new = _renamed(change, new, updates)
    changed = _insert_new(session, new, ratio_defaults, overrides, now)
    change.providers(changed)
    known = {} if read is None else {
        provider_id: read.inventories.get(provider_id, {})
        for provider_id in read.still_current(
            {row.id: row.generation for row in locked})}
    _update_existing(change, updates, ratio_defaults, overrides, known)
    return (changed + [provider_id for provider_id, _, _ in updates],
            bool(changed))


def _renamed(change, new, updates):
    """Reports under a name not stored whose provider UUID is stored under
    another name: the provider was renamed (the Placement feed reports a
    compute node's tree under its provider's name until Nova's API knows
    the node's service host, then under ``(host, node)``). Its row takes
    the new name, keeping its id and claims, and the report is an update
    of it, added to ``updates`` (a report older than the row's is not
    applied, as any other); returns the reports left to insert.
    Rare (new names only): one read by UUID, then the rows locked by
    primary key and renamed."""
    uuids = {node.get('uuid') for node, _ in new} - {None}
    if not uuids:
        return new
    session = change.session
    stored = {row.uuid: row for row in session.execute(
        sa.select(P.c.id, P.c.uuid, P.c.host, P.c.nodename)
        .where(P.c.uuid.in_(uuids)))}
    if not stored:
        return new
    by_id = {stored[node.get('uuid')].id: (node, at) for node, at in new
             if node.get('uuid') in stored}
    locked = change.lock_providers(
        by_id, columns=('reported_at', 'generation')).rows
    change.providers({row.id: row.reported_at for row in locked})
    taken = set()
    for row in locked:
        node, reported_at = by_id[row.id]
        taken.add(node.get('uuid'))
        if row.reported_at is not None and reported_at <= row.reported_at:
            continue    # older than what the row holds: not applied
        old = stored[node.get('uuid')]
        session.execute(sa.update(P).where(P.c.id == row.id).values(
            host=node.host, nodename=node.nodename))
        LOG.info('Provider %s renamed from %s/%s to %s/%s by its report',
                 node.get('uuid'), old.host, old.nodename, node.host,
                 node.nodename)
        updates.append((row.id, node, reported_at))
    return [(node, at) for node, at in new if node.get('uuid') not in taken]


def _is_newer(reported_at, row):
    """Is a report of ``reported_at`` newer than stored ``row`` (as read
    before the lock; the lock's own read decides)?"""
    return row is not None and (row.reported_at is None
                                or reported_at > row.reported_at)


def _insert_new(session, new, ratio_defaults, overrides, now):
    """Reports of providers not stored yet: one multi-row INSERT for the
    providers, one SELECT of their ids, one multi-row INSERT for their
    inventories (an executemany: psycopg2's execute_values through
    SQLAlchemy's "insertmanyvalues", PyMySQL's own multi-row rewrite), not
    a few statements per provider. Returns the new providers' ids."""
    if not new:
        return []
    session.execute(sa.insert(P), [{
        'uuid': node.get('uuid') or uuidutils.generate_uuid(),
        'host': node.host, 'nodename': node.nodename, 'generation': 0,
        'change_seq': 0, 'created_at': now,
        'failed_builds': _failed_builds(node).get('failed_builds', 0),
        'disabled': bool(node.disabled),
        'availability_zone': node.get('availability_zone'),
        'reported_at': reported_at, 'attributes': _attributes(node),
        'kind': _kind(node)} for node, reported_at in new])
    id_of = {(r.host, r.nodename): r.id for r in session.execute(
        sa.select(P.c.id, P.c.host, P.c.nodename).where(
            P.c.host.in_({node.host for node, _ in new})))}
    ids = [id_of[(node.host, node.nodename)] for node, _ in new]
    rows = []
    for provider_id, (node, _) in zip(ids, new):
        inventories = inventories_from_node(node, ratio_defaults)
        ratios.apply_overrides(inventories, overrides.get(node.host, {}))
        rows.extend({'provider_id': provider_id, 'claimed': 0,
                     'resource_class': rc,
                     **{k: inv[k] for k in _INVENTORY_COLUMNS}}
                    for rc, inv in sorted(inventories.items()))
    if rows:
        session.execute(sa.insert(INV), rows)
    return list(ids)


_INVENTORY_COLUMNS = ('total', 'reserved', 'min_unit', 'max_unit',
                      'step_size', 'allocation_ratio', 'reported_ratio',
                      'capacity', 'reported_used')


# the provider is locked first; run by ``Change.update_providers``
_UPDATE_PROVIDERS = rows_update.RowsUpdate(P, ('id',), {
    'disabled': rows_update.as_reported,
    'availability_zone': rows_update.as_reported,
    'reported_at': rows_update.as_reported,
    'attributes': rows_update.as_reported, 'kind': rows_update.as_reported,
    # a report without the count keeps the stored one
    'failed_builds': lambda value: sa.func.coalesce(value,
                                                    P.c.failed_builds)})
_UPDATE_INVENTORIES = rows_update.RowsUpdate(
    INV, ('provider_id', 'resource_class'),
    dict.fromkeys(_INVENTORY_COLUMNS, rows_update.as_reported))


_STORED_INVENTORIES = sa.select(
    INV.c.provider_id, INV.c.resource_class,
    *[INV.c[k] for k in _INVENTORY_COLUMNS]).where(
    INV.c.provider_id.in_(sa.bindparam('ids', expanding=True)))
_STORED_INVENTORIES_LOCKED = _STORED_INVENTORIES.with_for_update()
# what ``_same`` compares is among what the reads select
assert set(_INVENTORY_KEYS) <= set(_INVENTORY_COLUMNS)


def _stored_inventories(session):
    """The stored inventories of locked providers (``ids``), as they are
    now: PostgreSQL's READ COMMITTED reads the latest rows, SQLite has one
    writer; MySQL/MariaDB's REPEATABLE READ snapshot may predate the
    providers' lock, so there it is a locking (current) read, in the
    lock order (providers, then their inventories)."""
    if db_api.dialect_of(session).name == 'mysql':
        return _STORED_INVENTORIES_LOCKED
    return _STORED_INVENTORIES


def _update_existing(change, updates, ratio_defaults, overrides, known):
    """Reports of providers already stored (and locked): one statement
    for the providers, one for their inventories (those of classes no
    longer reported are withdrawn: ``_WITHDRAWN``), and inserts for
    inventories of classes they did not report before. ``known``: the
    stored inventory rows (by class) of providers read before the lock
    and unchanged since; the others' are read under the lock."""
    if not updates:
        return
    session = change.session
    providers, inventories = [], {}
    for provider_id, node, reported_at in updates:
        providers.append({
            'id': provider_id, 'disabled': bool(node.disabled),
            'availability_zone': node.get('availability_zone'),
            'reported_at': reported_at, 'attributes': _attributes(node),
            'kind': _kind(node),
            'failed_builds': _failed_builds(node).get('failed_builds')})
        rows = inventories_from_node(node, ratio_defaults)
        ratios.apply_overrides(rows, overrides.get(node.host, {}))
        for rc, inv in rows.items():
            inventories[(provider_id, rc)] = inv
    change.update_providers(_UPDATE_PROVIDERS, providers)
    stored = {(p, rc): row for p, _, _ in updates if p in known
              for rc, row in known[p].items()}
    unknown = [p for p, _, _ in updates if p not in known]
    if unknown:
        stored.update(
            ((row.provider_id, row.resource_class), row)
            for row in session.execute(_stored_inventories(session),
                                       {'ids': unknown}))
    # a row the report repeats is not written (a tracker's usage moves
    # less often than its workload and stats): read under the providers'
    # locks, or before them and unchanged since, the stored row is the
    # latest (``_stored_inventories``)
    present = [{'provider_id': p, 'resource_class': rc,
                **{k: inv[k] for k in _INVENTORY_COLUMNS}}
               for (p, rc), inv in sorted(inventories.items())
               if (p, rc) in stored and any(
                   getattr(stored[(p, rc)], k) != inv[k]
                   for k in _INVENTORY_COLUMNS)]
    # classes a tracker stopped reporting (no more dedicated CPUs, a
    # generic class dropped): nothing left to claim, claims kept
    present += [{'provider_id': p, 'resource_class': rc, **_WITHDRAWN}
                for (p, rc), row in sorted(stored.items())
                if (p, rc) not in inventories and not _is_withdrawn(row)]
    missing = [dict(inv, provider_id=p, claimed=0)
               for (p, rc), inv in sorted(inventories.items())
               if (p, rc) not in stored]
    if present:
        _UPDATE_INVENTORIES.run(session, present)
    if missing:
        session.execute(sa.insert(INV), missing)


#: an inventory row of a class its tracker no longer reports; the row
#: stays (its ``claimed`` still counts the claims it holds) with no
#: capacity, so nothing more is claimed from it until it is reported again
_WITHDRAWN = {'total': 0, 'reserved': 0, 'min_unit': 1, 'max_unit': 0,
              'step_size': 1, 'allocation_ratio': 1.0,
              'reported_ratio': 1.0, 'capacity': 0, 'reported_used': 0}


def _is_withdrawn(row):
    return row.total == 0 and row.capacity == 0 and row.reported_used == 0


def _kind(node):
    return node.get('kind') or 'compute'


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
    with changes.write(db) as change:
        query = sa.select(P.c.id).where(P.c.host == host)
        if node:
            query = query.where(P.c.nodename == node)
        ids = sorted(change.session.execute(query).scalars().all())
        if ids:
            change.lock_providers(ids)
            change.session.execute(
                sa.update(P).where(P.c.id.in_(ids))
                .values(failed_builds=P.c.failed_builds + 1))
            change.providers(ids)
        return len(ids)
