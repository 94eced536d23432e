"""Casts applied in the order they were sent, whatever order they arrive in.

Casts reach several threads and workers in any order, so a row written by
a cast keeps ``updated_at``: when the message that last changed it was
sent. A message changes a row only if it was sent later; the newest
message wins, whatever the order of arrival and the number of workers.
Doc: doc/source/ordering.rst.

Clocks: ``clamp(stamp, db.clock.now())`` is the send time a write orders
by: the sender's, or now when the sender's is ahead (the message is kept,
and ordered as if sent when the worker handled it). A clock ahead can thus
never make a row refuse the messages sent after it. "Now" is the database
server's clock (``scheduler.db.clock``), the one clock of all workers: a
worker whose own clock runs behind would clamp a message below the stamp
an earlier message was given, and the later message would lose.

One locked transaction: a writer reads which of its uuids exist, then
``lock``s those rows (``SELECT ... FOR UPDATE`` by primary key, ids
sorted, in one statement: the idea of ``Change.lock_providers``, whose
order puts these rows before any provider, ``scheduler.db.changes``),
compares each locked row's stamp with its message's (``is_newer``) and
writes (``write``): an UPDATE of the locked row, or an INSERT of a new
one. Why no message is lost or undone:

* a locked row is the latest committed one (PostgreSQL and MariaDB read
  it under the lock; SQLite has one writer), and stays so until COMMIT:
  the compare and the write see the same row;
* a row that is not found is inserted; a concurrent first insert of the
  same uuid makes the INSERT fail on the unique index, and the whole
  transaction starts over (``RetryRequest``), finding the row this time;
* missing rows are never locked: on MariaDB a locking read of a missing
  row takes a gap lock, and writers of different new uuids would deadlock
  on each other's gaps.

A delete is a write like the others: it leaves a tombstone (the row,
``deleted``, with the delete's stamp), even for a uuid never seen, so an
update sent before it can never bring the row back. On equal stamps the
delete wins (``ties``). ``purge_tombstones`` deletes those whose delete
was sent longer ago than any message can still be in flight
(``scheduler-manage db purge``).
"""

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import timeutils

from scheduler.db import models

#: tables whose deleted rows stay as tombstones (``deleted`` is true)
TOMBSTONED = (models.aggregates, models.instances)


def clamp(stamp, now=None):
    """The time a message sent at ``stamp`` (naive UTC, or None for a
    sender that gave none) is ordered by: ``stamp``, or ``now`` (the
    database's clock, ``db.clock.now()``; default this host's clock) if
    ``stamp`` is later or missing."""
    now = now or timeutils.utcnow()
    return now if stamp is None or stamp > now else stamp


def newer(table, stamp, ties=False):
    """SQL condition: rows of ``table`` last changed by a message sent
    before ``stamp`` (or at ``stamp`` too, with ``ties``)."""
    before = (table.c.updated_at <= stamp if ties
              else table.c.updated_at < stamp)
    return sa.or_(table.c.updated_at.is_(None), before)


def is_newer(stamp, row, ties=False):
    """Is a message sent at ``stamp`` newer than what last changed
    ``row`` (a locked row, or None for none)? With ``ties`` (a delete),
    a message sent at the same time is newer too."""
    if row is None or row.updated_at is None:
        return True
    return stamp >= row.updated_at if ties else stamp > row.updated_at


def lock(session, table, uuids):
    """Lock the rows of ``table`` with these uuids, those that exist;
    returns {uuid: row} as read under the lock (module docstring).
    Providers are locked by ``Change.lock_providers`` only."""
    if table not in TOMBSTONED:
        raise ValueError('%s rows are not locked here' % table.name)
    uuids = sorted(set(uuids))
    if not uuids:
        return {}
    ids = session.execute(sa.select(table.c.id).where(
        table.c.uuid.in_(uuids))).scalars().all()
    if not ids:
        return {}
    rows = session.execute(sa.select(table).where(
        table.c.id.in_(sorted(ids))).order_by(table.c.id)
        .with_for_update()).all()
    return {row.uuid: row for row in rows}


def write(session, table, uuid, row, values):
    """Write ``values`` to ``row`` (locked by ``lock``), or insert the
    row ``uuid`` if there was none: a concurrent first insert of it makes
    the transaction start over."""
    if row is not None:
        session.execute(sa.update(table).where(table.c.id == row.id)
                        .values(**values))
        return
    try:
        session.execute(sa.insert(table).values(uuid=uuid, **values))
    except db_exc.DBDuplicateEntry as exc:
        raise db_exc.RetryRequest(exc)


def purge_tombstones(session, before):
    """Delete tombstones whose delete was sent before ``before`` (naive
    UTC); returns {table name: rows deleted}.

    Safe once ``before`` is far enough back (days): an update sent before
    the delete that arrived after the purge would bring the row back, but
    no message is in flight that long, and every live worker applied the
    tombstone through the change feed within its poll interval.
    """
    purged = {}
    for table in TOMBSTONED:
        purged[table.name] = session.execute(sa.delete(table).where(
            table.c.deleted == sa.true(), table.c.updated_at.is_not(None),
            table.c.updated_at < before)).rowcount
    return purged
