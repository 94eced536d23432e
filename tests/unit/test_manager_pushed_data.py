"""SchedulerManager casts of version 1.2 (aggregates, instances, failed
builds): good input is persisted; bad input is dropped at the RPC edge
with one warning
and never raises (a cast has nobody to answer to)."""

import logging

import pytest

from scheduler import context as sched_context
from scheduler import objects
from scheduler.db import aggregates as db_aggregates
from scheduler.db import instances as db_instances
from scheduler.db import provider_reads

from . import fakes
from .edge import edge

A1 = '1a2b3c4d-0000-4000-8000-000000000001'
A2 = '1a2b3c4d-0000-4000-8000-000000000002'
I1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
I2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])


def _agg(uuid=A1, **fields):
    return objects.Aggregate(uuid=uuid, **fields)


def _aggregates(db):
    return {a['uuid']: a for a in db_aggregates.load_aggregate_changes(db)}


def _failures(db):
    return {p['nodename']: p['failed_builds']
            for p in provider_reads.list_providers(db)}


BAD_CASTS = [
    # (id, method, kwargs, words the warning contains)
    ('aggregates missing', 'update_aggregates', {},
     ['aggregates', 'missing']),
    ('aggregate as a dict', 'update_aggregates',
     {'aggregates': [{'uuid': A1}]}, ['aggregates[0]', 'dict']),
    ('second aggregate bad', 'update_aggregates',
     {'aggregates': [_agg(), 'agg']}, ['aggregates[1]']),
    ('aggregate without uuid', 'update_aggregates',
     {'aggregates': [_agg(A2), objects.Aggregate(name='x')]},
     ['aggregates[1].uuid']),
    ('delete: not a uuid', 'delete_aggregate', {'aggregate': 'fast'},
     ["'fast'"]),
    ('delete: nothing', 'delete_aggregate', {}, ['aggregate', 'missing']),
    ('delete: aggregate without uuid', 'delete_aggregate',
     {'aggregate': objects.Aggregate(name='x')}, ['delete_aggregate']),
    ('instance info: no host', 'update_instance_info',
     {'instance_info': [objects.InstanceInfo(uuid=I1)]}, ['host']),
    ('instance info: empty host', 'update_instance_info',
     {'host': '', 'instance_info': []}, ['host']),
    ('instance info: missing', 'update_instance_info', {'host': 'h1'},
     ['instance_info', 'missing']),
    ('instance info: a dict', 'update_instance_info',
     {'host': 'h1', 'instance_info': [objects.InstanceInfo(uuid=I1),
                                      {'uuid': I2}]},
     ['instance_info[1]']),
    ('instance info without uuid', 'update_instance_info',
     {'host': 'h1', 'instance_info': objects.InstanceInfo(host='h1')},
     ['instance_info[0].uuid']),
    ('delete instance: bad uuid', 'delete_instance_info',
     {'host': 'h1', 'instance_uuid': 'vm-1'}, ["'vm-1'"]),
    ('delete instance: no host', 'delete_instance_info',
     {'instance_uuid': I1}, ['host', 'missing']),
    ('build failed: no name', 'build_failed', {}, ['name']),
    ('build failed: empty name', 'build_failed', {'name': ''}, ['name']),
    ('build failed: short pair', 'build_failed', {'name': ['h1']},
     ['name']),
    ('build failed: bad node', 'build_failed', {'name': ['h1', 3]},
     ['name']),
]


@pytest.mark.parametrize('method, kwargs, words',
                         [c[1:] for c in BAD_CASTS],
                         ids=[c[0] for c in BAD_CASTS])
def test_bad_cast_logs_a_warning_and_writes_nothing(manager, db, caplog,
                                                    method, kwargs, words):
    db_instances.save_instances(db, 'h1', [objects.InstanceInfo(uuid=I1)])
    fakes.report(db, 'h1')
    db_aggregates.save_aggregates(db, [_agg(hosts=['h1'])])
    before = (_aggregates(db), db_instances.instances_on(db, 'h1'),
              _failures(db))
    with caplog.at_level(logging.WARNING):
        assert edge.send(manager, method, **kwargs) is None
    [record] = [r for r in caplog.records
                if r.name == 'scheduler.edge.dispatcher']
    assert record.levelno == logging.WARNING
    message = record.getMessage()
    assert 'Rejected %s (cast)' % method in message
    for word in words:
        assert word in message
    assert (_aggregates(db), db_instances.instances_on(db, 'h1'),
            _failures(db)) == before


def test_update_aggregates_persists_one_or_many(manager, db):
    manager.update_aggregates(CTXT, _agg(name='one', hosts=['h1']))
    manager.update_aggregates(CTXT, [
        _agg(A1, name='one', hosts=['h2'], metadata={'ssd': 'true'}),
        _agg(A2)])
    stored = _aggregates(db)
    assert (stored[A1]['name'], stored[A1]['hosts'],
            stored[A1]['metadata']) == ('one', ['h2'], {'ssd': 'true'})
    # unset fields take their defaults
    assert (stored[A2]['name'], stored[A2]['hosts'],
            stored[A2]['metadata']) == (None, [], {})


@pytest.mark.parametrize('by', ['object', 'uuid'])
def test_delete_aggregate(manager, db, by):
    manager.update_aggregates(CTXT, [_agg(A1), _agg(A2)])
    manager.delete_aggregate(CTXT, _agg(A1) if by == 'object' else A1)
    stored = _aggregates(db)
    assert (stored[A1]['deleted'], stored[A2]['deleted']) == (True, False)


def test_delete_unknown_aggregate_is_quiet(manager, db, caplog):
    with caplog.at_level(logging.WARNING, logger='scheduler.manager'):
        manager.delete_aggregate(CTXT, A1)
    assert not [r for r in caplog.records if r.name == 'scheduler.manager']


def test_instance_info_is_stored_and_deleted(manager, db):
    manager.update_instance_info(CTXT, 'h1', objects.InstanceInfo(
        uuid=I1, project_id='p1'))
    manager.update_instance_info(CTXT, 'h1', [objects.InstanceInfo(
        uuid=I2)])
    rows = db_instances.instances_on(db, 'h1')
    assert [(r['uuid'], r['project_id']) for r in rows] == \
        [(I1, 'p1'), (I2, None)]
    manager.delete_instance_info(CTXT, 'h1', I1)
    assert [r['uuid'] for r in db_instances.instances_on(db, 'h1')] == [I2]
    assert db_instances.hosts_of(db, [I1, I2]) == {'h1'}


def test_build_failed_counts_on_the_host_or_the_node(manager, db):
    fakes.report(db, 'h1', 'n1')
    fakes.report(db, 'h1', 'n2')
    manager.build_failed(CTXT, 'h1')
    assert _failures(db) == {'n1': 1, 'n2': 1}
    manager.build_failed(CTXT, ['h1', 'n2'])
    assert _failures(db) == {'n1': 1, 'n2': 2}


def test_build_failed_on_unknown_host_warns(manager, db, caplog):
    with caplog.at_level(logging.WARNING, logger='scheduler.manager'):
        manager.build_failed(CTXT, 'ghost')
    assert "unknown host 'ghost'" in caplog.text


def _place(manager, uuid, **spec):
    [[selection]] = manager.select_destinations(
        CTXT, fakes.request_spec(**spec), instance_uuids=[uuid])
    return selection.host


def _claims(db, uuid):
    from scheduler.db import claims
    return {a['host'] for a in claims.list_allocations(db,
                                                       consumer_uuid=uuid)}


def test_instance_info_confirms_claims_so_a_later_request_is_new(manager,
                                                                 db):
    # a claim nobody confirmed answers a repeat of its request with itself;
    # once the tracker reports the instance running there, a new request
    # of the same instance (nova's unshelve to another zone) is planned
    fakes.report(db, 'h1', availability_zone='z1')
    fakes.report(db, 'h2', availability_zone='z2')
    assert _place(manager, I1, availability_zone='z1') == 'h1'
    manager.update_instance_info(CTXT, 'h1', [objects.InstanceInfo(
        uuid=I1, host='h1', node='h1')])
    assert _place(manager, I1, availability_zone='z2') == 'h2'
    assert _claims(db, I1) == {'h2'}


def test_delete_instance_info_gives_back_the_claim_on_that_host(manager,
                                                                db):
    import datetime
    from oslo_utils import timeutils
    fakes.report(db, 'h1')
    host = _place(manager, I1)
    later = CTXT.to_dict()
    # a message sent before the claim was written leaves it alone
    early = sched_context.RequestContext.from_dict(later)
    early.sent_at = timeutils.utcnow() - datetime.timedelta(hours=1)
    manager.delete_instance_info(early, host, I1)
    assert _claims(db, I1) == {host}
    manager.delete_instance_info(CTXT, 'elsewhere', I1)
    assert _claims(db, I1) == {host}
    manager.delete_instance_info(CTXT, host, I1)
    assert _claims(db, I1) == set()
