"""SQLite writers of one process queue on a Python lock, not in SQLite's
busy handler (scheduler.db.api; doc/source/performance-history.rst, "Tail")."""

import threading
import time

import sqlalchemy as sa

from scheduler import conf as sched_conf
from scheduler.db import api as db_api
from scheduler.db import migration


def _database(url):
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[])
    conf.set_override('connection', url, 'database')
    return db_api.Database(conf)


def test_pools_of_one_file_share_one_writer_lock(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'a.sqlite')
    first, second = _database(url), _database(url)
    other = _database('sqlite:///%s' % (tmp_path / 'b.sqlite'))
    assert first._writer_lock is second._writer_lock
    assert first._writer_lock is not other._writer_lock


def test_a_waiting_writer_starts_as_soon_as_the_holder_commits(tmp_path):
    url = 'sqlite:///%s' % (tmp_path / 'a.sqlite')
    holder, waiter = _database(url), _database(url)
    migration.db_sync(holder)
    # SQLite's busy handler would retry every 100 ms by now, and any
    # other writer could slip in between two retries
    hold, delays = 0.4, []
    for _ in range(3):
        entered, released = threading.Event(), []

        def wait_then_write():
            entered.wait()
            with waiter.writer() as session:
                session.execute(sa.text('SELECT 1'))
                delays.append(time.monotonic() - released[0])

        thread = threading.Thread(target=wait_then_write)
        thread.start()
        with holder.writer() as session:
            session.execute(sa.text(
                'UPDATE change_counter SET value = value'))
            entered.set()
            time.sleep(hold)    # the lock held for a while, on purpose
            released.append(time.monotonic())
        thread.join(10)
    assert len(delays) == 3
    assert min(delays) < 0.05, delays
