"""One statement a worker sends many times a second, through the driver.

The claim function's call (``scheduler.db.claim_routine``) is a single
statement in autocommit, run for nearly every placement. Through
SQLAlchemy (a pool checkout and check-in, a ``Connection``, an execution
context and a result per call) it cost the worker about three times the
CPU of the driver's own ``cursor.execute``: 1.0 against 0.3 ms per
claim, measured in process on PostgreSQL (doc/source/performance.rst).
``DriverCalls`` keeps up to ``KEEP`` connections of the database's pool
checked out, in the driver's autocommit mode, and runs a statement on a
cursor of one of them::

    calls = driver_calls.of(database)
    answer = calls.scalar('SELECT f(%(a)s)', {'a': 1})

The connections stay the pool's: they count against ``[database]
max_pool_size`` and ``max_overflow`` as any checked-out connection does;
a thread that finds none kept takes one from the pool, and gives it back
to the pool if ``KEEP`` are kept already.

A statement that fails on the driver's connection (the database
restarted since the connection was opened, a deadlock, any error) is
sent once more the usual way, through SQLAlchemy, whose pool checks
its connection first and whose errors oslo.db translates (a deadlock as
``DBDeadlock``, which ``retry_on_deadlock`` retries; an outage as
``DBConnectionError``, ``scheduler.db.outages``); the connection the
error came from is closed, never kept. If the first try had in fact run
before its connection dropped, the second finds what it wrote: the claim
function answers that its consumers hold claims, and the claim is taken
the way a repeated request's is (``scheduler.db.claims``).

PostgreSQL (psycopg2) only: the claim function is PostgreSQL's.
"""

import collections
import threading
import weakref

#: idle connections kept per database
KEEP = 4

_CALLS = weakref.WeakKeyDictionary()
_CALLS_LOCK = threading.Lock()


def of(database):
    """The ``DriverCalls`` of ``database`` (made at first use)."""
    calls = _CALLS.get(database)
    if calls is None:
        with _CALLS_LOCK:
            calls = _CALLS.get(database)
            if calls is None:
                calls = _CALLS[database] = DriverCalls(database)
    return calls


class DriverCalls:
    """See the module docstring."""

    def __init__(self, database):
        self._database = database
        self._dbapi = database.engine.dialect.loaded_dbapi
        self._idle = collections.deque()
        self._lock = threading.Lock()

    def scalar(self, sql, params):
        """The first column of the first row ``sql`` returns (None if
        none), run in autocommit."""
        proxied = None
        try:
            proxied = self._take()
            cursor = proxied.dbapi_connection.cursor()
            try:
                cursor.execute(sql, params)
                row = cursor.fetchone()
            finally:
                cursor.close()
        except self._dbapi.Error:
            if proxied is not None:
                try:
                    proxied.invalidate()
                except Exception:  # noqa: S110 - closed or gone, either way
                    pass
            # once more the usual way (module docstring)
            with self._database.autocommit() as connection:
                return connection.exec_driver_sql(sql, params).scalar()
        self._give_back(proxied)
        return None if row is None else row[0]

    def _take(self):
        """A connection in autocommit: a kept one, else the pool's."""
        with self._lock:
            while self._idle:
                proxied = self._idle.pop()
                if not proxied.dbapi_connection.closed:
                    return proxied
                proxied.invalidate()
        proxied = self._database.engine.raw_connection()
        proxied.dbapi_connection.autocommit = True
        return proxied

    def _give_back(self, proxied):
        with self._lock:
            if len(self._idle) < KEEP:
                self._idle.append(proxied)
                return
        # client-side, no round trip: the pool's connections run in
        # transactions
        proxied.dbapi_connection.autocommit = False
        proxied.close()
