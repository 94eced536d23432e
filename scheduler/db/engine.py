"""The SQLAlchemy engine of the scheduler database, from ``[database]``.

``create(url, options, max_retries=None)`` returns an engine built on
SQLAlchemy's public ``create_engine`` arguments and pool events, with
oslo.db's exception translation (``exc_filters.register_engine``: a
deadlock is ``DBDeadlock``, a lost server ``DBConnectionError``, as the
writers' retries expect) and oslo.db's ``[database]`` options, read here:

* ``max_pool_size``, ``max_overflow``, ``pool_timeout``,
  ``connection_recycle_time``, ``connection_parameters`` (added to the
  URL's query);
* ``max_retries`` and ``retry_interval``: the first connection is tried
  that many times (``-1``: until it works; ``0``: not at all);
* ``mysql_sql_mode`` and ``mysql_wsrep_sync_wait`` (Galera), set on each
  new MySQL/MariaDB connection; ``sqlite_synchronous``;
* the scheduler's own ``idle_transaction_timeout``: the database server
  ends a transaction that sent no statement for that long, and releases
  its locks (a scheduler host cut off the network mid-claim), set when
  each connection starts (PostgreSQL, MariaDB);
* ``connection_debug`` (50: statements logged, 100: rows too) and
  ``connection_trace`` (each statement ends with a comment naming the
  line, outside SQLAlchemy, that sent it).

What differs from oslo.db's own engine, each to save a round trip per
transaction (doc/source/decisions/claims.rst):

* connections are not pinged when checked out (``pool_pre_ping``): a
  connection the server dropped fails on first use, and the writers'
  ``retry_on_deadlock`` retries the whole transaction then;
* on MySQL/MariaDB a connection goes back to the pool without the
  ``ROLLBACK`` SQLAlchemy sends after every COMMIT, unless the server
  reports a transaction still open (``pool_reset_on_return=None`` and a
  ``reset`` event, SQLAlchemy's documented recipe);
* psycopg2 sends an executemany in pages (``values_plus_batch``); its
  row counts of an executemany are then unreliable, and no writer of the
  scheduler reads them;
* SQLite files keep a pool of open connections (oslo.db gives them none:
  the close of the last one checkpointed the write-ahead log, 5 ms of a
  claim's 8); an in-memory database is one connection shared by threads.

SQLite transactions are begun by the engine's ``begin`` event, not by
the sqlite3 module, so that a writer can open its transaction with
``BEGIN IMMEDIATE`` (``immediate()`` says whether the current thread
writes; ``scheduler.db.api``).
"""

import logging
import os
import time
import traceback

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import exc_filters
from pymysql.constants import SERVER_STATUS

LOG = logging.getLogger(__name__)

# a SQLite file's pool: the 16 RPC threads of a worker rarely hold more
SQLITE_POOL_SIZE = 4
SQLITE_MAX_OVERFLOW = 16


def create(url, options, immediate=lambda: False, max_retries=None):
    """An engine for ``url`` (module docstring); ``options`` is the
    ``[database]`` group (or any mapping with its option names)."""
    url = sa.engine.make_url(url)
    if _option(options, 'connection_parameters'):
        url = url.update_query_string(options['connection_parameters'],
                                      append=True)
    backend = url.get_backend_name()
    idle = _option(options, 'idle_transaction_timeout', 0)
    arguments = {'pool_pre_ping': False, 'connect_args': {},
                 'pool_recycle': _option(options, 'connection_recycle_time',
                                         3600)}
    if backend == 'sqlite':
        _sqlite_pool(url, arguments)
    else:
        for option, argument in (('max_pool_size', 'pool_size'),
                                 ('max_overflow', 'max_overflow'),
                                 ('pool_timeout', 'pool_timeout')):
            if _option(options, option) is not None:
                arguments[argument] = options[option]
    if backend == 'postgresql':
        if 'client_encoding' not in url.query:
            arguments['client_encoding'] = 'utf8'
        if url.get_driver_name() == 'psycopg2':
            arguments['executemany_mode'] = 'values_plus_batch'
        if idle:
            # a server setting at connection start: no round trip
            arguments['connect_args']['options'] = (
                '-c idle_in_transaction_session_timeout=%d' % (idle * 1000))
    if backend == 'mysql':
        if 'charset' not in url.query:
            arguments['connect_args']['charset'] = 'utf8'
        arguments['pool_reset_on_return'] = None
    _log_statements(_option(options, 'connection_debug', 0))
    engine = sa.create_engine(url, **arguments)
    if backend == 'sqlite':
        _sqlite_events(engine, _option(options, 'sqlite_synchronous', True),
                       immediate)
    if backend == 'mysql':
        _mysql_events(engine, _option(options, 'mysql_sql_mode'),
                      _option(options, 'mysql_wsrep_sync_wait'), idle)
    if _option(options, 'connection_trace', False):
        _trace_comments(engine)
    exc_filters.register_engine(engine)
    if max_retries is None:
        max_retries = _option(options, 'max_retries', 10)
    _first_connection(engine, max_retries,
                      _option(options, 'retry_interval', 10))
    return engine


def _option(options, name, default=None):
    try:
        value = options[name]
    except (KeyError, LookupError, AttributeError):
        return default
    return default if value is None and default is not None else value


def _sqlite_pool(url, arguments):
    if url.database in (None, '', ':memory:'):
        arguments['poolclass'] = sa.pool.StaticPool
        arguments['connect_args'].update(check_same_thread=False,
                                         cached_statements=0)
        return
    arguments.update(poolclass=sa.pool.QueuePool,
                     pool_size=SQLITE_POOL_SIZE,
                     max_overflow=SQLITE_MAX_OVERFLOW)


def _sqlite_events(engine, synchronous, immediate):
    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        # the engine's begin event opens transactions, not sqlite3
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute('PRAGMA journal_mode=WAL')
        cursor.execute('PRAGMA busy_timeout=30000')
        cursor.execute('PRAGMA foreign_keys=ON')
        if not synchronous:
            cursor.execute('PRAGMA synchronous=OFF')
        cursor.close()

    @sa.event.listens_for(engine, 'begin')
    def _on_begin(conn):
        if 'in_transaction' not in conn.info:
            conn.exec_driver_sql('BEGIN IMMEDIATE' if immediate() else 'BEGIN')
            conn.info['in_transaction'] = True

    @sa.event.listens_for(engine, 'commit')
    @sa.event.listens_for(engine, 'rollback')
    def _on_end(conn):
        conn.info.pop('in_transaction', None)


def _mysql_events(engine, sql_mode, wsrep_sync_wait, idle):
    settings = [(statement, value) for statement, value in (
        ('SET SESSION sql_mode = %s', sql_mode),
        ('SET SESSION wsrep_sync_wait = %s', wsrep_sync_wait))
        if value is not None]
    if settings or idle:
        @sa.event.listens_for(engine, 'connect')
        def _on_connect(dbapi_conn, record):
            cursor = dbapi_conn.cursor()
            for statement, value in settings:
                cursor.execute(statement, [value])
            if idle and 'mariadb' in dbapi_conn.get_server_info().lower():
                cursor.execute('SET SESSION idle_transaction_timeout = %s',
                               [idle])
            cursor.close()

    @sa.event.listens_for(engine, 'reset')
    def _reset(dbapi_conn, record, state):
        if state.terminate_only or not state.asyncio_safe:
            return
        status = getattr(dbapi_conn, 'server_status', None)
        if status is None or status & SERVER_STATUS.SERVER_STATUS_IN_TRANS:
            dbapi_conn.rollback()


def _log_statements(level):
    logger = logging.getLogger('sqlalchemy.engine')
    if level >= 100:
        logger.setLevel(logging.DEBUG)
    elif level >= 50:
        logger.setLevel(logging.INFO)


def _trace_comments(engine):
    # SQLAlchemy's frames and the standard library's (contextlib) skipped
    skipped = (os.path.dirname(sa.__file__), os.path.dirname(os.__file__),
               '<')

    @sa.event.listens_for(engine, 'before_cursor_execute', retval=True)
    def _trace(conn, cursor, statement, parameters, context, executemany):
        for frame in reversed(traceback.extract_stack()[:-1]):
            if (frame.filename == __file__
                    or frame.filename.startswith(skipped)):
                continue
            statement += ' -- %s:%d %s' % (frame.filename, frame.lineno,
                                           frame.name)
            break
        return statement, parameters


def _first_connection(engine, attempts, interval):
    """Connect once (oslo.db's start-up test): ``attempts`` tries,
    ``interval`` seconds apart; -1 tries for ever, 0 not at all. The
    start-up checks connect with no retry first, so that a wrong password
    is reported at once (``scheduler.service.startup_checks``)."""
    attempt = 0
    while attempts and (attempts < 0 or attempt < attempts):
        attempt += 1
        try:
            with engine.connect():
                return
        except (db_exc.DBConnectionError, sa.exc.OperationalError) as exc:
            # oslo.db translates MySQL's refusals, not libpq's newer
            # "connection to server ... failed"; both are retried
            if 0 < attempts <= attempt:
                if isinstance(exc, db_exc.DBConnectionError):
                    raise
                raise db_exc.DBConnectionError(exc) from exc
            LOG.warning('Database connection failed; %s attempts left',
                        'unlimited' if attempts < 0 else attempts - attempt)
            time.sleep(interval)
