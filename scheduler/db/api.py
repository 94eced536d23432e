"""Transactions of the scheduler database, on the engine of
``scheduler.db.engine``.

``Database(conf)`` is created once per worker process, after any fork.
``with db.writer() as session`` opens a write transaction, ``db.reader()`` a
read-only one, ``db.connection()`` a Core connection for a few fixed
reads (no ORM session to build and close), ``db.raw_reader()`` the
driver's own cursors for the host-state poller's reads every 100 ms
(``RawReader``: no SQLAlchemy per poll, and no pool checkout on the
connection the poller keeps), ``db.driver_calls`` the claim function's
call on connections kept for it (``scheduler.db.driver_calls``);
writers use ``scheduler.db.changes.write``, which wraps ``writer()`` and
records the change in the feed; ``local_writes`` counts those committed
through this pool (``count_local_write``), so the worker's own writes
reach its next decision without waiting for the poller (tracker reports
excepted: ``scheduler.db.changes.write``).
``next_change_seq(session)`` bumps the previous release's global change
counter (only under ``[database] legacy_change_counter``, last in the
transaction, after the provider rows are locked).

SQLite serializes writers: its write transactions start with
``BEGIN IMMEDIATE`` (WAL journal, 30 s busy timeout), so two processes never
fail each other's transaction half-way. Within one process, writers of the
same database file first queue on one Python lock (``_sqlite_writer_lock``):
a writer that found the file locked would otherwise sleep in SQLite's busy
handler, in steps growing to 100 ms, and lose the lock to every newcomer
meanwhile (the simulator's 1.6 s tail, doc/source/performance-history.rst
"Tail"); a thread waiting on the Python lock wakes when it is released.

Round trips: the engine saves the ping on checkout and, on MySQL and
MariaDB, the ROLLBACK after a COMMIT (``scheduler.db.engine``).
"""

import contextlib
import os
import threading

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy import orm
from oslo_config import cfg
from oslo_db import api as oslo_db_api

from scheduler.db import clock as db_clock
from scheduler.db import driver_calls
from scheduler.db import driver_connections
from scheduler.db import engine as db_engine
from scheduler.db import models


def _scheduler_option(conf, name):
    """``[scheduler] name``, False where that group is not registered
    (tools that only open the database)."""
    try:
        return bool(conf.scheduler[name])
    except (cfg.NoSuchOptError, AttributeError):
        return False


class Database:
    """One connection pool to the scheduler database."""

    def __init__(self, conf, connection=None, max_retries=None):
        self.url = connection or conf.database.connection
        self._local = threading.local()
        self.engine = db_engine.create(
            self.url, conf.database, immediate=self._immediate,
            max_retries=max_retries)
        self._sessions = orm.sessionmaker(bind=self.engine,
                                          expire_on_commit=False)
        self.is_sqlite = self.engine.dialect.name == 'sqlite'
        self.is_postgresql = self.engine.dialect.name == 'postgresql'
        self._writer_lock = (_sqlite_writer_lock(self.url) if self.is_sqlite
                             else contextlib.nullcontext())
        # see scheduler.db.changes
        self.legacy_change_counter = bool(
            'legacy_change_counter' in conf.database
            and conf.database.legacy_change_counter)
        # see scheduler.db.ratios
        self.aggregate_allocation_ratios = _scheduler_option(
            conf, 'aggregate_allocation_ratios')
        # writes committed through this pool that the worker's host table
        # has not applied in memory: its next decision re-reads the feed
        # (scheduler.host_state.cache)
        self.local_writes = 0
        self._local_writes_lock = threading.Lock()
        # the claim function's calls on PostgreSQL, on connections of
        # this pool kept for them (scheduler.db.driver_calls)
        self.driver_calls = driver_calls.DriverCalls(self)
        # the one clock of every worker on every host: the server's
        # (scheduler.db.clock)
        self.clock = db_clock.DatabaseClock(self.engine)

    def count_local_write(self):
        with self._local_writes_lock:
            self.local_writes += 1

    def _immediate(self):
        """Whether this thread opens a write transaction (SQLite's
        ``BEGIN IMMEDIATE``, ``scheduler.db.engine``)."""
        return getattr(self._local, 'writing', False)

    @contextlib.contextmanager
    def _writing(self):
        """Held around every write transaction: SQLite's one writer per
        file, and the flag that makes its BEGIN an IMMEDIATE one."""
        with self._writer_lock:
            self._local.writing = True
            try:
                yield
            finally:
                self._local.writing = False

    @contextlib.contextmanager
    def writer(self):
        with self._writing(), self._sessions.begin() as session:
            yield session

    @contextlib.contextmanager
    def core_writer(self):
        """A write transaction on a Core connection of the pool (no ORM
        session: about 0.7 ms less CPU per transaction than ``writer()``
        on PostgreSQL and MariaDB, measured on a claim); for Core
        statements only. Committed when the block ends, rolled back if
        it raises; oslo.db's error translation and the SQLite writer
        lock apply as to ``writer()``."""
        with self._writing(), self.engine.begin() as connection:
            yield connection

    @contextlib.contextmanager
    def reader(self):
        with self._sessions() as session:
            yield session

    @contextlib.contextmanager
    def connection(self):
        """A Core connection of the pool, for reads only; its transaction
        is rolled back when it goes back to the pool. Cheaper per use than
        ``reader()`` (no ORM session); statements are Core statements.

        On PostgreSQL it runs in autocommit: READ COMMITTED takes a
        snapshot per statement inside a transaction too, so a transaction
        would only add its BEGIN and ROLLBACK round trips. Elsewhere the
        statements share one transaction (MariaDB's snapshot, SQLite's
        read lock)."""
        if self.is_postgresql:
            with self.autocommit() as connection:
                yield connection
            return
        with self.engine.connect() as connection:
            yield connection

    @contextlib.contextmanager
    def autocommit(self):
        """A Core connection of the pool on which every statement is its
        own transaction: for one-statement work such as
        ``scheduler.db.claim_routine``'s call, and reads that need no
        common snapshot.

        With psycopg2 the driver's own ``autocommit`` flag is set for the
        block and cleared after it, with no round trip, not SQLAlchemy's
        ``isolation_level`` option (``scheduler.db.driver_connections``
        says why)."""
        if self.engine.dialect.driver != 'psycopg2':
            with self.engine.connect().execution_options(
                    isolation_level='AUTOCOMMIT') as connection:
                yield connection
            return
        with self.engine.connect() as connection:
            driver = connection.connection.driver_connection
            driver_connections.enter_autocommit(driver)
            try:
                yield connection
            finally:
                driver_connections.leave_autocommit(driver)

    def raw_reader(self, keep=False):
        """A ``RawReader`` of this database: reads through the driver's
        own cursors; with ``keep``, on a connection it keeps."""
        return RawReader(self.engine, keep)

    def dispose(self):
        """Close the pool's idle connections and those kept for
        ``driver_calls``. The pool stays usable: later statements open
        connections again. A ``RawReader``'s kept connection is its
        owner's to close (``RawReader.close``)."""
        self.driver_calls.close()
        self.engine.dispose()


class RawReader:
    """Fixed reads made again and again (the host-state poller's,
    ``scheduler.host_state.cache``) through the driver's own cursors: no
    SQLAlchemy ``Connection``, compiled statement or result per read, the
    third of the poller's CPU per poll they cost.

    ::

        reader = db.raw_reader(keep=True)
        with reader.cursor() as cursor:    # a DBAPI cursor
            cursor.execute('SELECT stripe, seq FROM change_stripes')
            rows = cursor.fetchall()
        reader.close()

    Statements are plain text: values go in the driver's ``paramstyle``
    or, integers only, written into the text.

    With ``keep`` (one thread's reader: its owner serializes the blocks),
    a DBAPI connection is taken out of the pool at first use (``detach``:
    the pool opens another in its place if it needs one) and kept, so a
    block costs no checkout or check-in either; a block that fails closes
    it and the next opens another. Without ``keep``, or on an in-memory
    SQLite database (one connection, the pool's), each block borrows a
    connection of the pool (any thread).

    The statements of one block share one transaction on SQLite (one read
    lock), and on MariaDB when the connection is borrowed from the pool
    (one REPEATABLE READ snapshot), ended when the block ends; on
    PostgreSQL, and on MariaDB on the connection kept with ``keep``, they
    run in autocommit, each statement reading a snapshot of its own
    (PostgreSQL's READ COMMITTED takes one per statement anyway; on
    MariaDB the block's ROLLBACK was a sixth of the poller's CPU).
    ``scheduler.db.changes`` says why either is enough for a reader of the
    change feed. A driver error leaves the block as
    SQLAlchemy's ``DBAPIError``, so an outage is told from a bug as for
    any other read (``scheduler.db.outages``); the poller's next poll is
    its retry.

    ``scheduler.db.driver_calls.DriverCalls`` (the claim function's
    call) keeps connections of the pool too, but for many threads,
    checked out rather than detached, and sends a failed call once more
    through SQLAlchemy rather than raising it: its module docstring says
    why. What the two do alike (autocommit, closing a connection that
    failed) is ``scheduler.db.driver_connections``.
    """

    def __init__(self, engine, keep=False):
        self._engine = engine
        self._dbapi = engine.dialect.loaded_dbapi
        self.dialect = engine.dialect.name
        self._keep = keep and isinstance(engine.pool, sa.pool.QueuePool)
        self._held = None
        # PyMySQL's flag is a round trip to set: only on the connection
        # kept, which never goes back to the pool
        self._autocommit = self.dialect == 'postgresql' or (
            self.dialect == 'mysql' and self._keep)

    @contextlib.contextmanager
    def cursor(self):
        """A driver cursor, its statements in one transaction or in
        autocommit (class docstring)."""
        proxied = self._held or self._open()
        connection = proxied.dbapi_connection
        try:
            cursor = connection.cursor()
            try:
                if self.dialect == 'sqlite':
                    cursor.execute('BEGIN')
                yield cursor
            finally:
                cursor.close()
            if not self._autocommit:
                connection.rollback()
            elif self.dialect == 'postgresql' and not self._keep:
                driver_connections.leave_autocommit(connection)
        except BaseException as exc:
            self._drop(proxied)
            if isinstance(exc, self._dbapi.Error):
                raise self._wrapped(exc) from exc
            raise
        if not self._keep:
            proxied.close()

    def close(self):
        """Close the kept connection, if any (a later block opens one)."""
        if self._held is not None:
            self._drop(self._held)

    def _open(self):
        try:
            proxied = self._engine.raw_connection()
            driver_connections.set_up(proxied, self._set_up)
        except self._dbapi.Error as exc:
            raise self._wrapped(exc) from exc
        if self._keep:
            proxied.detach()
            self._held = proxied
        return proxied

    def _set_up(self, connection):
        if self.dialect == 'postgresql':
            driver_connections.enter_autocommit(connection)
        elif (self.dialect == 'mysql' and
              connection.get_autocommit() != self._autocommit):
            connection.autocommit(self._autocommit)

    def _drop(self, proxied):
        """Close a connection a block failed on (it may be broken), or
        the kept one (``close``)."""
        if proxied is self._held:
            self._held = None
        driver_connections.discard(proxied)

    def _wrapped(self, exc):
        return sa_exc.DBAPIError.instance(
            None, None, exc, self._dbapi.Error,
            connection_invalidated=True, dialect=self._engine.dialect)


# one lock per SQLite database file, shared by every Database of the
# process (a simulator runs several workers' pools on one file)
_SQLITE_WRITER_LOCKS = {}
_SQLITE_WRITER_LOCKS_GUARD = threading.Lock()
# a forked worker starts with no writer, whatever its parent's threads held
os.register_at_fork(after_in_child=_SQLITE_WRITER_LOCKS.clear)


def _sqlite_writer_lock(url):
    """The process-wide lock of the SQLite file of ``url``: re-entrant,
    since a writer nested in another on one thread already waits on
    SQLite itself (as it did before this lock)."""
    path = sa.engine.make_url(url).database or ':memory:'
    key = path if path == ':memory:' else os.path.realpath(path)
    with _SQLITE_WRITER_LOCKS_GUARD:
        return _SQLITE_WRITER_LOCKS.setdefault(key, threading.RLock())


def dialect_of(session):
    """The dialect under an ORM session or a Core connection."""
    dialect = getattr(session, 'dialect', None)
    return dialect if dialect is not None else session.bind.dialect


def next_change_seq(session):
    """Bump and return the global change counter (see module docstring).

    One round trip: ``UPDATE ... RETURNING`` where the database has it,
    MySQL/MariaDB's ``LAST_INSERT_ID(expr)`` otherwise.
    """
    counter = models.change_counter
    bump = sa.update(counter).where(counter.c.id == 1)
    if dialect_of(session).name == 'mysql':
        result = session.execute(bump.values(
            value=sa.func.last_insert_id(counter.c.value + 1)))
        return result.lastrowid
    return session.execute(bump.values(value=counter.c.value + 1)
                           .returning(counter.c.value)).scalar_one()


def current_change_seq(session):
    counter = models.change_counter
    return session.execute(sa.select(counter.c.value)
                           .where(counter.c.id == 1)).scalar_one()


def retry_on_deadlock(fn):
    """Retry a whole write transaction on deadlock, on a lost connection
    (connections are not pinged before use) or ``RetryRequest``.

    Short, jittered waits: these transactions are small and a deadlock
    victim should come back while its rival is just committing.
    """
    return oslo_db_api.wrap_db_retry(
        max_retries=5, retry_on_deadlock=True, retry_on_disconnect=True,
        retry_interval=0.02,
        inc_retry_interval=True, max_retry_interval=0.5, jitter=True)(fn)
