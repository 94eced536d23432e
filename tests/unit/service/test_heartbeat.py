"""A worker's service record: one per (host, worker index), updated by
each new process of that index, down at once after a clean stop."""

import datetime

from scheduler.db import services as db_services
from tests import waiting


def _wait_recorded(db, count):
    waiting.wait_for(
        lambda: len(db_services.list_services(db, 60, live_only=True))
        >= count, 10, '%d records written' % count)


def test_a_clean_stop_marks_the_record_down_at_once(conf, db):
    conf.set_override('host', 'sched-a')
    beating = db_services.start_heartbeat(conf, db, 0)
    _wait_recorded(db, 1)
    beating.stop()
    [record] = db_services.list_services(db, 60)
    assert not record['up'] and record['pid'] == db_services.STOPPED
    assert db_services.list_services(db, 60, live_only=True) == []


def test_one_record_per_host_and_worker_index(db):
    long_ago = db_services.now() - datetime.timedelta(hours=1)
    # rows of earlier releases, which added one per start
    for _ in range(3):
        db_services.register(db, 'sched-a', 1, at=long_ago)
    kept = db_services.register(db, 'sched-a', 1)
    db_services.register(db, 'sched-a', 0)
    db_services.register(db, 'sched-b', 1)
    records = db_services.list_services(db, 60)
    assert sorted((r['host'], r['worker']) for r in records) == [
        ('sched-a', 0), ('sched-a', 1), ('sched-b', 1)]
    [again] = [r for r in records if (r['host'], r['worker'])
               == ('sched-a', 1)]
    assert again['id'] == kept and again['up']
