"""The engine's settings reach the real servers (``scheduler.db.engine``):
a transaction that stays open without a statement is ended by the
server after ``[database] idle_transaction_timeout`` seconds, and its
row locks go with it, so a worker cut off mid-claim blocks nobody for
longer than that."""

import threading
import time

import pytest

from scheduler.db import engine as db_engine
from tests.functional import services

SETTING = {
    'postgresql': 'SHOW idle_in_transaction_session_timeout',
    'mariadb': 'SELECT @@SESSION.idle_transaction_timeout',
}


def _engine(backend, **options):
    services.require(backend)
    values = {'max_retries': 0}
    values.update(options)
    return db_engine.create(services.ADMIN_URLS[backend], values)


@pytest.mark.parametrize('backend, seven, off', [
    ('postgresql', '7s', '0'), ('mariadb', 7, 0)])
def test_the_timeout_is_set_on_every_connection(backend, seven, off):
    for value, expected in ((7, seven), (0, off)):
        engine = _engine(backend, idle_transaction_timeout=value)
        try:
            with engine.connect() as conn:
                assert conn.exec_driver_sql(SETTING[backend]).scalar() == \
                    expected
        finally:
            engine.dispose()


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_a_stalled_transaction_releases_its_locks(backend):
    stalled = _engine(backend, idle_transaction_timeout=2)
    other = _engine(backend)
    table = 'idle_lock_%d' % threading.get_ident()
    try:
        with other.begin() as conn:
            conn.exec_driver_sql('CREATE TABLE %s (id INTEGER PRIMARY KEY, '
                                 'n INTEGER)' % table)
            conn.exec_driver_sql('INSERT INTO %s VALUES (1, 0)' % table)
        holder = stalled.connect()
        holder.begin()
        holder.exec_driver_sql('UPDATE %s SET n = 1 WHERE id = 1' % table)
        # the holder now sends nothing, as a host cut off the network
        started = time.monotonic()
        with other.begin() as conn:
            conn.exec_driver_sql('UPDATE %s SET n = 2 WHERE id = 1' % table)
        waited = time.monotonic() - started
        assert 1.5 < waited < 8, waited
        holder.invalidate()
        holder.close()
    finally:
        with other.begin() as conn:
            conn.exec_driver_sql('DROP TABLE IF EXISTS %s' % table)
        stalled.dispose()
        other.dispose()
