"""One statement a worker sends many times a second, through the driver.

The claim routine's call (``scheduler.db.claim_routines``) runs for nearly
every placement: PostgreSQL's function is a single statement in
autocommit, MariaDB's procedure a ``CALL`` and a ``COMMIT``. Through
SQLAlchemy (a pool checkout and check-in, a ``Connection``, an execution
context and a result per call, a transaction's begin and end) it cost
the worker about three times the CPU of the driver's own
``cursor.execute``: 1.0 against 0.3 ms per claim, measured in process on
PostgreSQL (doc/source/performance-history.rst); on MariaDB the
transaction's begin, commit and check-in were 40 % of the claim's CPU in
a worker (py-spy, 3,000 placements). ``DriverCalls`` keeps up to
``KEEP`` connections of the database's pool checked out (psycopg2's in
the driver's autocommit mode, PyMySQL's in transactions, none open while
kept) and runs a statement on a cursor of one of them::

    answer = database.driver_calls.scalar('SELECT f(%(a)s)', {'a': 1})
    answer = database.driver_calls.transaction(
        'CALL p(%(a)s)', {'a': 1}, keep=lambda answer: answer is None)

``transaction`` runs its statement in a transaction of its own and
commits it if ``keep(answer)``, else rolls it back.

The connections stay the pool's: they count against ``[database]
max_pool_size`` and ``max_overflow`` as any checked-out connection does;
a thread that finds none kept takes one from the pool, and gives it back
to the pool if ``KEEP`` are kept already.

A statement that fails on the driver's connection (the database
restarted since the connection was opened, a deadlock, any error) is
sent once more the usual way, through SQLAlchemy, whose errors oslo.db
translates (a deadlock as ``DBDeadlock``, which ``retry_on_deadlock``
retries; an outage as ``DBConnectionError``, ``scheduler.db.outages``);
the connection the error came from is closed, never kept. If the first
try had in fact run before its connection dropped, the second finds what
it wrote: the claim function answers that its consumers hold claims, and
the claim is taken the way a repeated request's is
(``scheduler.db.claims``).

``scalar`` is psycopg2's (autocommit), ``transaction`` PyMySQL's.

``Database`` makes one per pool (``database.driver_calls``), and
``Database.dispose`` closes the connections it keeps (``close``).

Why not as ``scheduler.db.api.RawReader`` does (the two share their
rules on autocommit and on a failed connection:
``scheduler.db.driver_connections``):

* Many threads call at once (a worker's RPC executor), so kept
  connections are a pool of their own, under a lock, and a thread finds
  one kept or takes one from the pool; the poller's reader is one
  thread's, with one connection and no lock.
* They stay checked out of the pool, not detached: a worker's claim
  calls are bounded by the pool's size like its other statements, and a
  connection beyond ``KEEP`` goes back to it. The poller's one connection
  is held for the worker's life, outside the pool's count.
* A failed call is sent once more through SQLAlchemy instead of raised
  as SQLAlchemy's ``DBAPIError`` as the reader's are: the claim's
  callers need oslo.db's translated errors (``DBDeadlock``,
  ``DBConnectionError``), which only its hooks on SQLAlchemy's execution
  make, and a claim is on the request path, where a stale connection
  must cost a second try, not an error; the poller reads again at its
  next poll anyway.
"""

import collections
import threading

from scheduler.db import driver_connections

#: idle connections kept per database
KEEP = 4


class DriverCalls:
    """See the module docstring."""

    def __init__(self, database):
        self._database = database
        self._dbapi = database.engine.dialect.loaded_dbapi
        # psycopg2's kept connections are in its autocommit mode
        self._autocommit = database.engine.dialect.driver == 'psycopg2'
        self._idle = collections.deque()
        self._lock = threading.Lock()

    def scalar(self, sql, params):
        """The first column of the first row ``sql`` returns (None if
        none), run in autocommit."""
        done, answer = self._on_kept(
            lambda connection: _first(connection, sql, params))
        if done:
            return answer
        # once more the usual way (module docstring)
        with self._database.autocommit() as connection:
            return connection.exec_driver_sql(sql, params).scalar()

    def transaction(self, sql, params, keep):
        """The first column of the first row ``sql`` returns (None if it
        returns none, or no result at all), run in a transaction of its
        own: committed if ``keep(answer)``, else rolled back."""
        def run(connection):
            answer = _first(connection, sql, params)
            if keep(answer):
                connection.commit()
            else:
                connection.rollback()
            return answer
        done, answer = self._on_kept(run)
        if done:
            return answer
        # once more the usual way (module docstring)
        return self._transaction_again(sql, params, keep)

    def _on_kept(self, run):
        """``(True, run(driver connection))`` on a kept connection, given
        back after; ``(False, None)`` if the driver raised, the
        connection then closed for good."""
        proxied = None
        try:
            proxied = self._take()
            answer = run(proxied.dbapi_connection)
        except self._dbapi.Error:
            if proxied is not None:
                driver_connections.discard(proxied)
            return False, None
        self._give_back(proxied)
        return True, answer

    def _transaction_again(self, sql, params, keep):
        try:
            with self._database.core_writer() as connection:
                result = connection.exec_driver_sql(sql, params)
                answer = result.scalar() if result.returns_rows else None
                if not keep(answer):
                    raise _Undone(answer)   # rolls the transaction back
        except _Undone as undone:
            return undone.answer
        return answer

    def close(self):
        """Close the connections kept (``Database.dispose``). Calls may
        go on: they take connections of the pool again, and keep them."""
        with self._lock:
            kept, self._idle = self._idle, collections.deque()
        for proxied in kept:
            driver_connections.discard(proxied)

    def _take(self):
        """A connection (psycopg2's in autocommit): a kept one, else the
        pool's."""
        with self._lock:
            while self._idle:
                proxied = self._idle.pop()
                if not driver_connections.is_closed(
                        proxied.dbapi_connection):
                    return proxied
                driver_connections.discard(proxied)
        proxied = self._database.engine.raw_connection()
        if self._autocommit:
            driver_connections.set_up(proxied,
                                      driver_connections.enter_autocommit)
        return proxied

    def _give_back(self, proxied):
        with self._lock:
            if len(self._idle) < KEEP:
                self._idle.append(proxied)
                return
        if self._autocommit:
            driver_connections.leave_autocommit(proxied.dbapi_connection)
        proxied.close()


def _first(connection, sql, params):
    """The first column of the first row ``sql`` returns on a cursor of
    driver ``connection`` (None if no row, or no result at all)."""
    cursor = connection.cursor()
    try:
        cursor.execute(sql, params)
        row = cursor.fetchone() if cursor.description else None
    finally:
        cursor.close()
    return None if row is None else row[0]


class _Undone(Exception):
    """``transaction``'s answer, not to be kept: raised out of the block
    whose transaction it rolls back."""

    def __init__(self, answer):
        super().__init__(answer)
        self.answer = answer
