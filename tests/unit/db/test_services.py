"""Service records: a worker's heartbeat thread records it and keeps it
up; records age into 'down' after worker_down_time."""

import datetime

from scheduler import objects
from scheduler.client import rpcapi
from scheduler.db import services as db_services
from tests import waiting


def test_heartbeat_records_the_worker_and_keeps_it_up(conf, db):
    conf.set_override('heartbeat_interval', 1)
    conf.set_override('host', 'sched-a')
    stop = db_services.start_heartbeat(conf, db, 3)
    try:
        [first] = waiting.wait_for(
            lambda: db_services.list_services(db, 60), 10,
            'the record written')
        # the next beat (heartbeat_interval 1)
        [later] = waiting.wait_for(
            lambda: [r for r in db_services.list_services(db, 60)
                     if r['heartbeat_at'] > first['heartbeat_at']], 10,
            'a later heartbeat')
    finally:
        stop.stop()
    assert (first['host'], first['worker'], first['up']) == ('sched-a', 3,
                                                             True)
    assert first['rpc_version'] == rpcapi.RPC_API_VERSION
    assert first['object_versions']['Selection'] == objects.Selection.VERSION
    assert later['heartbeat_at'] > first['heartbeat_at']


def test_a_worker_without_heartbeat_goes_down(db):
    start = db_services.now() - datetime.timedelta(seconds=90)
    db_services.register(db, 'sched-b', 0, at=start)
    [record] = db_services.list_services(db, 60)
    assert not record['up']
    assert db_services.list_services(db, 60, live_only=True) == []
    assert db_services.list_services(db, 120, live_only=True) != []
