"""The engine of ``scheduler.db.engine``: SQLAlchemy's public arguments
and events, oslo.db's ``[database]`` options and error translation."""

import logging

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc
from sqlalchemy.dialects.postgresql import psycopg2

from scheduler.db import engine as db_engine


def _options(**values):
    base = {'max_retries': 0}
    base.update(values)
    return base


def test_psycopg2_sends_an_executemany_in_pages():
    # no connection is made (max_retries 0): the dialect alone
    engine = db_engine.create('postgresql+psycopg2://nobody@127.0.0.1/x',
                              _options())
    assert (engine.dialect.executemany_mode
            is psycopg2.EXECUTEMANY_VALUES_PLUS_BATCH)
    assert engine.pool.status()  # a QueuePool, built by create_engine


def test_pool_options_reach_the_pool():
    engine = db_engine.create('postgresql+psycopg2://nobody@127.0.0.1/x',
                              _options(max_pool_size=3, max_overflow=7,
                                       pool_timeout=9))
    assert engine.pool.size() == 3
    assert engine.pool.timeout() == 9
    assert 'Pool size: 3' in engine.pool.status()


def test_connection_parameters_are_added_to_the_url():
    engine = db_engine.create('mysql+pymysql://nobody@127.0.0.1/x',
                              _options(connection_parameters='read_timeout=7'))
    assert engine.url.query['read_timeout'] == '7'


def test_sqlite_file_keeps_a_pool_and_begins_immediate_writers(tmp_path):
    writing = []
    engine = db_engine.create('sqlite:///%s' % (tmp_path / 'a.sqlite'),
                              _options(), immediate=lambda: bool(writing))
    assert isinstance(engine.pool, sa.pool.QueuePool)
    with engine.begin() as conn:
        conn.exec_driver_sql('CREATE TABLE t (x INTEGER)')
    writing.append(True)
    statements = []
    sa.event.listen(engine, 'before_cursor_execute',
                    lambda *args: statements.append(args[2]))
    with engine.begin() as conn:
        conn.exec_driver_sql('INSERT INTO t VALUES (1)')
    assert statements[0] == 'BEGIN IMMEDIATE'
    with engine.connect() as conn:
        assert conn.exec_driver_sql('PRAGMA journal_mode').scalar() == 'wal'
        assert conn.exec_driver_sql('PRAGMA foreign_keys').scalar() == 1


def test_sqlite_memory_is_one_shared_connection():
    engine = db_engine.create('sqlite://', _options())
    assert isinstance(engine.pool, sa.pool.StaticPool)


def test_errors_are_translated_by_oslo_db(tmp_path):
    engine = db_engine.create('sqlite:///%s' % (tmp_path / 'b.sqlite'),
                              _options())
    with engine.begin() as conn:
        conn.exec_driver_sql('CREATE TABLE t (x INTEGER PRIMARY KEY)')
        conn.exec_driver_sql('INSERT INTO t VALUES (1)')
    with pytest.raises(db_exc.DBDuplicateEntry):
        with engine.begin() as conn:
            conn.exec_driver_sql('INSERT INTO t VALUES (1)')


def test_first_connection_is_retried_then_raised(monkeypatch):
    sleeps = []
    monkeypatch.setattr(db_engine.time, 'sleep', sleeps.append)
    with pytest.raises(db_exc.DBConnectionError):
        # nothing listens on port 1
        db_engine.create('postgresql+psycopg2://nobody@127.0.0.1:1/x',
                         _options(max_retries=3, retry_interval=2))
    assert sleeps == [2, 2]


def test_connection_debug_logs_statements():
    logger = logging.getLogger('sqlalchemy.engine')
    level = logger.level
    try:
        db_engine.create('sqlite://', _options(connection_debug=50))
        assert logger.level == logging.INFO
    finally:
        logger.setLevel(level)


def test_connection_trace_names_the_sending_line(tmp_path):
    engine = db_engine.create('sqlite://', _options(connection_trace=True))
    statements = []
    sa.event.listen(engine, 'after_cursor_execute',
                    lambda *args: statements.append(args[2]))
    with engine.connect() as conn:
        conn.exec_driver_sql('SELECT 1')
    assert ' -- ' in statements[-1]
    assert 'test_engine_options.py' in statements[-1]

