"""Connections of the pool used through the driver, outside SQLAlchemy.

Two users of the database run a few fixed statements so often that
SQLAlchemy's machinery per statement (a pool checkout and check-in, a
``Connection``, an execution context, a result) was most of their cost;
they keep DBAPI connections of the pool and use the driver's own
cursors instead:

* ``scheduler.db.api.RawReader``, the host-state poller's reads (one
  thread, one connection detached from the pool);
* ``scheduler.db.driver_calls.DriverCalls``, the claim routine's call
  (many threads, connections kept checked out of the pool).

Why they differ (threads, detached or checked out, what becomes of a
driver error) is in ``scheduler.db.driver_calls``. What they do alike is
here, and ``Database.autocommit`` (``scheduler.db.api``) follows the
same rule for a SQLAlchemy ``Connection``:

* **Autocommit on psycopg2**: a connection checked out of the pool is
  switched to the driver's own autocommit mode (``enter_autocommit``) and
  back before the pool gets it again (``leave_autocommit``): the pool's
  connections run in transactions. The flag is client-side, with no
  round trip either way, and with no transaction open in autocommit the
  pool's rollback on check-in sends nothing either. (SQLAlchemy's
  ``isolation_level='AUTOCOMMIT'`` option sends ``SET
  default_transaction_isolation`` every time the connection goes back to
  the pool instead: 856 statements for 500 placements, seen in
  PostgreSQL's statement log.) A connection detached from the pool never
  goes back, and stays in autocommit.
* **Closing a kept connection for good** (``discard``): one a statement
  failed on, whatever the error (it may be broken half-way through a
  reply), is never used again, nor one its keeper is done with
  (``RawReader.close``, ``Database.dispose``). It is invalidated if the
  pool lent it (the pool forgets it and opens another when it needs
  one), closed outright if it was detached (the pool no longer knows it:
  invalidating it would not close it).
"""


def enter_autocommit(dbapi_connection):
    """Switch a psycopg2 connection checked out of the pool to
    autocommit (module docstring: client-side, no round trip)."""
    dbapi_connection.autocommit = True


def leave_autocommit(dbapi_connection):
    """Switch a psycopg2 connection back to transactions before it goes
    back to the pool; a closed one is left as it is (psycopg2 refuses to
    set the flag on it)."""
    if not dbapi_connection.closed:
        dbapi_connection.autocommit = False


def is_closed(dbapi_connection):
    """Has the driver closed ``dbapi_connection`` (psycopg2's
    ``closed``, PyMySQL's ``open``)?"""
    closed = getattr(dbapi_connection, 'closed', None)
    if closed is not None:
        return bool(closed)
    return not getattr(dbapi_connection, 'open', True)


def discard(proxied):
    """Close ``proxied`` (a ``PoolProxiedConnection``) for good:
    invalidated if checked out of the pool, closed if detached from it
    (module docstring). An error closing it is ignored: closed or gone,
    either way."""
    try:
        if proxied.is_detached:
            proxied.dbapi_connection.close()
        else:
            proxied.invalidate()
    except Exception:  # noqa: S110 - closed or gone, either way
        pass


def set_up(proxied, setup):
    """``setup(dbapi_connection)`` on a connection just taken from the
    pool; if it fails, the connection is broken already: discarded (not
    left checked out) and the error raised."""
    try:
        setup(proxied.dbapi_connection)
    except BaseException:
        discard(proxied)
        raise
