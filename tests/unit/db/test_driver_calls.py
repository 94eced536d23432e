"""DriverCalls (scheduler.db.driver_calls): kept connections (psycopg2's
in autocommit), a statement that fails on one sent once more the usual
way, a transaction committed or rolled back as its answer says, and the
kept connections closed with the Database's pool. The real
database: tests/functional/test_claim_routine.py, test_faults_db.py and
test_claim_round_trips.py."""

import contextlib
import sqlite3

import psycopg2
import pymysql
import pytest
from oslo_db import exception as db_exc

from scheduler.db import driver_calls


class _Driver:
    """What a psycopg2 connection and its cursor do, scripted: each
    execute takes the next outcome (a row, or an exception)."""

    def __init__(self, outcomes):
        self.outcomes = outcomes
        self.autocommit = False
        self.closed = 0
        self.sent = []

    def cursor(self):
        return self

    def execute(self, sql, params):
        self.sent.append((sql, params, getattr(self, 'autocommit', None)))
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        self.row = outcome

    @property
    def description(self):
        return None if self.row is None else [('answer',)]

    def fetchone(self):
        return self.row

    def commit(self):
        self.sent.append('COMMIT')

    def rollback(self):
        self.sent.append('ROLLBACK')

    def close(self):
        pass


class _MySQLDriver(_Driver):
    """A PyMySQL connection: ``open``, not ``closed``, and no
    ``autocommit`` flag to set."""

    def __init__(self, outcomes):
        super().__init__(outcomes)
        del self.closed, self.autocommit
        self.open = True


class _Proxied:
    is_detached = False     # checked out of the pool

    def __init__(self, driver, database):
        self.dbapi_connection = driver
        self.database = database

    def close(self):
        self.database.returned.append(self)

    def invalidate(self):
        self.database.invalidated.append(self)
        self.dbapi_connection.closed = 1


class _Result:
    def __init__(self, value):
        self.value = value
        self.returns_rows = value is not None

    def scalar(self):
        return self.value


class _Database:
    """A pool handing out scripted driver connections, and the usual
    (SQLAlchemy) way answering ``usual`` or raising it."""

    def __init__(self, *drivers, usual=None, dbapi=psycopg2):
        self.drivers = list(drivers)
        self.usual = usual
        self.returned, self.invalidated, self.taken = [], [], 0
        self.the_usual_way, self.ended = [], []
        self.engine = self
        self.dialect = type('Dialect', (), {
            'loaded_dbapi': dbapi, 'driver': dbapi.__name__})()

    def raw_connection(self):
        self.taken += 1
        driver = self.drivers.pop(0)
        if isinstance(driver, Exception):
            raise driver
        return _Proxied(driver, self)

    @contextlib.contextmanager
    def autocommit(self):
        yield self

    @contextlib.contextmanager
    def core_writer(self):
        try:
            yield self
        except BaseException:
            self.ended.append('rolled back')
            raise
        self.ended.append('committed')


    def exec_driver_sql(self, sql, params):
        self.the_usual_way.append(sql)
        if isinstance(self.usual, Exception):
            raise self.usual
        return _Result(self.usual)


def test_a_connection_is_kept_in_autocommit_and_used_again():
    driver = _Driver([(7,), (8,)])
    database = _Database(driver)
    calls = driver_calls.DriverCalls(database)
    assert calls.scalar('SELECT 7', {}) == 7
    assert calls.scalar('SELECT 8', {}) == 8
    assert database.taken == 1 and database.returned == []
    assert [autocommit for _, _, autocommit in driver.sent] == [True, True]
    assert database.the_usual_way == []


def test_beyond_keep_connections_go_back_to_the_pool(monkeypatch):
    monkeypatch.setattr(driver_calls, 'KEEP', 1)
    database = _Database(_Driver([]), _Driver([]))
    calls = driver_calls.DriverCalls(database)
    first, second = calls._take(), calls._take()
    calls._give_back(first)
    calls._give_back(second)
    # one kept, the other back in the pool out of autocommit
    assert database.returned == [second]
    assert second.dbapi_connection.autocommit is False
    assert calls._take() is first


@pytest.mark.parametrize('error', [
    psycopg2.OperationalError('server closed the connection unexpectedly'),
    psycopg2.errors.DeadlockDetected('deadlock detected'),
    psycopg2.errors.UndefinedFunction('function f() does not exist'),
])
def test_a_failed_statement_is_sent_once_more_the_usual_way(error):
    driver = _Driver([error])
    database = _Database(driver, usual=5)
    assert driver_calls.DriverCalls(database).scalar('SELECT f()', {}) == 5
    assert database.the_usual_way == ['SELECT f()']
    # the connection it failed on is closed, never kept
    assert [p.dbapi_connection for p in database.invalidated] == [driver]


def test_what_the_usual_way_raises_is_raised():
    database = _Database(_Driver([psycopg2.OperationalError('gone')]),
                         usual=db_exc.DBConnectionError())
    with pytest.raises(db_exc.DBConnectionError):
        driver_calls.DriverCalls(database).scalar('SELECT 1', {})


def test_no_connection_from_the_pool_goes_the_usual_way():
    database = _Database(psycopg2.OperationalError('refused'), usual=3)
    assert driver_calls.DriverCalls(database).scalar('SELECT 3', {}) == 3


def test_a_connection_that_fails_as_it_is_set_up_is_not_left_out():
    """autocommit cannot be set (the connection broke since the pool
    handed it out): it is closed, not left checked out, and the call goes
    the usual way."""
    class _Broken(_Driver):
        def __setattr__(self, name, value):
            if name == 'autocommit' and value:
                raise psycopg2.OperationalError('gone')
            super().__setattr__(name, value)
    broken = _Broken([])
    database = _Database(broken, usual=4)
    assert driver_calls.DriverCalls(database).scalar('SELECT 4', {}) == 4
    assert [p.dbapi_connection for p in database.invalidated] == [broken]


def test_a_kept_connection_found_closed_is_not_used():
    stale, fresh = _Driver([(1,)]), _Driver([(2,)])
    database = _Database(stale, fresh)
    calls = driver_calls.DriverCalls(database)
    assert calls.scalar('SELECT 1', {}) == 1
    stale.closed = 1
    assert calls.scalar('SELECT 2', {}) == 2
    assert database.taken == 2 and database.the_usual_way == []


def test_close_closes_every_kept_connection():
    first, second = _Driver([(1,)]), _Driver([(2,)])
    database = _Database(first, second, _Driver([(3,)]))
    calls = driver_calls.DriverCalls(database)
    taken = calls._take(), calls._take()
    for proxied in taken:
        calls._give_back(proxied)
    calls.close()
    assert [p.dbapi_connection for p in database.invalidated] == [
        first, second]
    # calls go on, on a connection of the pool
    assert calls.scalar('SELECT 3', {}) == 3
    assert database.taken == 3


def test_dispose_closes_the_connections_kept_for_calls(db):
    """Database.dispose: the connections DriverCalls keeps, checked out
    of the pool until then, are closed as the pool's idle ones are."""
    kept = db.engine.raw_connection()
    driver = kept.dbapi_connection
    db.driver_calls._give_back(kept)
    assert db.engine.pool.checkedout() == 1
    db.dispose()
    assert db.engine.pool.checkedout() == 0
    with pytest.raises(sqlite3.ProgrammingError):
        driver.execute('SELECT 1')


def _mysql(*drivers, usual=None):
    return _Database(*drivers, usual=usual, dbapi=pymysql)


def _no_answer(answer):
    return answer is None


@pytest.mark.parametrize('outcome, answer, end', [
    (None, None, 'COMMIT'), (('held',), 'held', 'ROLLBACK')])
def test_a_transaction_is_committed_or_rolled_back_as_its_answer_says(
        outcome, answer, end):
    driver = _MySQLDriver([outcome, None])
    database = _mysql(driver)
    calls = driver_calls.DriverCalls(database)
    assert calls.transaction('CALL p()', {}, keep=_no_answer) == answer
    assert driver.sent[1] == end
    # kept, as it was: PyMySQL's connections are never put in autocommit
    assert calls.transaction('CALL p()', {}, keep=_no_answer) is None
    assert database.taken == 1 and driver.sent[-1] == 'COMMIT'
    assert not hasattr(driver, 'autocommit')


@pytest.mark.parametrize('usual, end', [
    (None, 'committed'), ('held', 'rolled back')])
def test_a_failed_transaction_is_run_once_more_the_usual_way(usual, end):
    driver = _MySQLDriver([pymysql.err.OperationalError(1213, 'deadlock')])
    database = _mysql(driver, usual=usual)
    assert driver_calls.DriverCalls(database).transaction(
        'CALL p()', {}, keep=_no_answer) == usual
    assert database.the_usual_way == ['CALL p()']
    assert database.ended == [end]
    assert [p.dbapi_connection for p in database.invalidated] == [driver]


def test_a_kept_mysql_connection_found_closed_is_not_used():
    stale, fresh = _MySQLDriver([None]), _MySQLDriver([None])
    database = _mysql(stale, fresh)
    calls = driver_calls.DriverCalls(database)
    calls.transaction('CALL p()', {}, keep=_no_answer)
    stale.open = False
    calls.transaction('CALL p()', {}, keep=_no_answer)
    assert database.taken == 2 and fresh.sent == [
        ('CALL p()', {}, None), 'COMMIT']
