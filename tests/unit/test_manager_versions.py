"""get_service_versions (RPC 1.3): what ``auto`` caps are made of, the
live workers' records and nothing else."""

import datetime


from scheduler import context as sched_context
from scheduler.db import services as db_services

CTXT = sched_context.RequestContext(project_id='p1', user_id='u1',
                                   roles=['service'])


def test_reports_live_workers_only(manager, db):
    now = db_services.now()
    db_services.register(db, 'sched-a', 0, at=now)
    db_services.register(db, 'sched-b', 1,
                         at=now - datetime.timedelta(hours=1))
    [live] = manager.get_service_versions(CTXT)
    assert (live['host'], live['worker']) == ('sched-a', 0)
    assert live['rpc_version'] == manager.target.version
    assert live['object_versions'] == db_services.object_versions()
    assert set(live) == {'host', 'pid', 'worker', 'release', 'rpc_version',
                         'object_versions'}
