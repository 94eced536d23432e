"""Providers and their inventories as workers read them.

The writes (tracker reports, failed builds) are ``scheduler.db.providers``'s;
why a reader of the change feed never misses a committed write is
``scheduler.db.changes``'s. What is read, in three shapes:

* ``load_all(db)``: every provider and inventory as plain tuples, in the
  columns of ``scheduler.host_state.bulk`` (a worker's cold load).
* ``poll(cursor, dialect, since)``: the host-state poller's read every
  ``[scheduler] refresh_interval`` (``scheduler.host_state.cache``),
  through the driver's cursor of a connection it keeps
  (``scheduler.db.api.RawReader``), as fixed SQL text with its integers
  written in: the feed's position (``changes.poll_position``) and, only
  if it moved, the providers stamped in the stripes that moved
  (``changes.select_changed``) and their inventories (``read_changed``),
  in ``load_all``'s columns and as the driver returns them (nothing
  converted: ``read_changed`` says why).
* ``load_changes(db, since)``: providers changed after feed position
  ``since`` (all of them for ``since=None``), or those asked for by id,
  with their inventories, as plain dicts ready for the in-memory host
  table (``HostTable.apply``); ``list_providers`` and ``find_provider``
  are the same dicts for tools (``scheduler-manage``) and tests.
"""

import sqlalchemy as sa

from scheduler.db import changes
from scheduler.db import models

P = models.providers
INV = models.inventories


def load_changes(db, since=None, provider_ids=None, until=None):
    """Providers changed after feed position ``since`` (see
    ``changes.changed_after``), or those in ``provider_ids``: a list of
    dicts, each with an ``inventories`` dict per resource class."""
    query = sa.select(P.c.id, P.c.uuid, P.c.host, P.c.nodename,
                      P.c.generation, P.c.change_seq, P.c.disabled,
                      P.c.availability_zone, P.c.reported_at,
                      P.c.attributes, P.c.failed_builds, P.c.kind)
    if provider_ids is not None:
        query = query.where(P.c.id.in_(list(provider_ids)))
    elif since is not None:
        query = query.where(changes.changed_after(P, since, until))
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
    return rows


# the columns of scheduler.host_state.bulk, in its order (load_all's
# statements are built once, so executing them reuses their compiled form)
_PROVIDERS = sa.select(P.c.id, P.c.uuid, P.c.host, P.c.nodename,
                       P.c.generation, P.c.disabled,
                       P.c.availability_zone, P.c.reported_at,
                       P.c.attributes, P.c.failed_builds, P.c.kind)
_INVENTORIES = sa.select(INV.c.provider_id, INV.c.resource_class,
                         INV.c.total, INV.c.reserved, INV.c.capacity,
                         INV.c.reported_used, INV.c.claimed,
                         INV.c.min_unit, INV.c.max_unit,
                         INV.c.step_size, INV.c.allocation_ratio)


def load_all(db):
    """Every provider and inventory as plain tuples, for a cold load
    (``scheduler.host_state.bulk``; its module names the columns)."""
    with db.reader() as session:
        return (session.execute(_PROVIDERS).tuples().all(),
                session.execute(_INVENTORIES).tuples().all())


def poll(cursor, dialect, since, legacy=False):
    """The poller's read after feed position ``since``, through a driver
    ``cursor`` (``scheduler.db.api.RawReader``) of a database of
    ``dialect`` (its name): ``(position, providers, inventories)``, the
    feed's current position (``changes.poll_position``) and, if it moved,
    the providers changed since ``since`` with their inventories
    (``read_changed``). One statement when nothing moved, three else.

    (One statement for the position and the providers, a lateral join
    on PostgreSQL, cost the poller more CPU than two, measured: the
    position's 64 rows are cheaper to decode than the text that sends
    ``since`` to the server.)
    """
    position = changes.poll_position(cursor, dialect, since, legacy)
    if position == since:
        return position, [], []
    return (position,) + read_changed(cursor, dialect, since, position)


def read_changed(cursor, dialect, since=None, until=None,
                 provider_ids=None):
    """Providers changed between feed positions ``since`` and ``until``
    (``changes.select_changed``), or those in ``provider_ids``, and their
    inventories, in ``load_all``'s columns, through a driver ``cursor``
    (``scheduler.db.api.RawReader``) of a database of ``dialect`` (its
    name): two statements, none if no provider is asked for.

    The statements are text with their integers written in, and the
    rows are the driver's tuples, converted by nothing: booleans may be
    0 and 1, and report times are ISO text (``YYYY-MM-DD HH:MM:SS.ffffff``
    or with a ``T``), which numpy reads a hundred times faster than the
    datetime objects a driver makes (``scheduler.host_state.bulk``).
    """
    select = _PROVIDERS_SQL[dialect]
    if provider_ids is not None:
        if not provider_ids:
            return [], []
        cursor.execute('%s WHERE id IN (%s)' % (
            select, _integers(sorted(provider_ids))))
    else:
        cursor.execute(changes.select_changed(select, P, since, until,
                                              dialect))
    providers = cursor.fetchall()
    return providers, _inventories_of(cursor, providers)


def _inventories_of(cursor, providers):
    if not providers:
        return []
    cursor.execute(_INVENTORIES_SQL % _integers(row[0] for row in providers))
    return cursor.fetchall()


def _integers(values):
    """``1,2,3``: SQL text of integers (``%d`` refuses anything else)."""
    return ','.join(['%d' % value for value in values])


def _providers_sql(report_time):
    """The providers' columns, ``report_time`` the text of reported_at."""
    return 'SELECT %s FROM %s' % (', '.join(
        report_time if c.name == 'reported_at' else c.name
        for c in _PROVIDERS.selected_columns), P.name)


# SQLite stores the text already; the format is fixed whatever the
# server's date style. No parameters are sent: '%' is no marker here.
_PROVIDERS_SQL = {
    'postgresql': _providers_sql(
        """to_char(reported_at, 'YYYY-MM-DD"T"HH24:MI:SS.US')"""),
    'mysql': _providers_sql(
        "DATE_FORMAT(reported_at, '%Y-%m-%dT%H:%i:%s.%f')"),
    'sqlite': _providers_sql('reported_at'),
}
_INVENTORIES_SQL = 'SELECT %s FROM %s WHERE provider_id IN (%%s)' % (
    ', '.join(c.name for c in _INVENTORIES.selected_columns), INV.name)


def find_provider(db, name):
    """The provider row whose host (or nodename) is ``name``, or None."""
    with db.reader() as session:
        row = session.execute(sa.select(P).where(
            sa.or_(P.c.host == name, P.c.nodename == name))
            .order_by(P.c.id)).first()
        return dict(row._mapping) if row else None


def list_providers(db):
    """Every provider, as ``load_changes`` dicts, by host and nodename."""
    rows = load_changes(db)
    return sorted(rows, key=lambda r: (r['host'], r['nodename']))
