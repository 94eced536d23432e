"""Casts applied in the order they were sent, whatever order they arrive in.

Casts reach several threads and workers in any order, so a row written by
a cast keeps ``updated_at``: when the message that last changed it was
sent. ``newer(table, stamp)`` is the condition a write sent at ``stamp``
must meet; ``write_if_newer`` updates a row under that condition, or
inserts it if there is none. A tombstone (a deleted row) keeps its stamp,
so an update sent before the delete cannot bring the row back;
``purge_tombstones`` deletes those whose delete was sent longer ago than
any message can still be in flight (``scheduler-manage db purge``).
"""

import sqlalchemy as sa
from oslo_db import exception as db_exc

from scheduler.db import models

#: tables whose deleted rows stay as tombstones (``deleted`` is true)
TOMBSTONED = (models.aggregates, models.instances)


def newer(table, stamp):
    """Rows of ``table`` last changed by a message sent before ``stamp``."""
    return sa.or_(table.c.updated_at.is_(None), table.c.updated_at < stamp)


def write_if_newer(session, table, uuid, values, stamp):
    """Update the row ``uuid`` of ``table`` unless a later message changed
    it; insert it if there is none. True if written. A concurrent first
    insert of the same uuid makes the transaction start over."""
    if session.execute(sa.update(table).where(
            table.c.uuid == uuid, newer(table, stamp))
            .values(**values)).rowcount:
        return True
    if session.execute(sa.select(table.c.id).where(
            table.c.uuid == uuid)).first() is not None:
        return False
    try:
        session.execute(sa.insert(table).values(uuid=uuid, **values))
    except db_exc.DBDuplicateEntry as exc:
        raise db_exc.RetryRequest(exc)
    return True


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
