"""Every message gets a clear answer from a real RPC server (in-process
transport): bad input is refused by name, database errors are answered
without SQL, and the worker goes on serving."""

import logging
import types

import oslo_messaging
import pytest
import sqlalchemy as sa
import sqlalchemy.exc as sa_exc
from oslo_db import exception as db_exc

from scheduler import context
from scheduler import exception
from scheduler import objects
from scheduler.rpc import messaging
from scheduler.db import models
from tests import waiting

CTXT = context.get_admin_context()
SQL = 'SELECT secret_column FROM providers WHERE host = %(host)s'
PARAMS = {'host': 'param-value-42'}


@pytest.fixture
def endpoint(manager):
    return manager


@pytest.fixture
def client(conf, transport, endpoint):
    server = messaging.get_server(conf, transport, [endpoint])
    server.start()
    yield oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic=conf.scheduler.topic,
                                         version='1.2'),
        serializer=messaging.get_serializer(), timeout=10)
    server.stop()
    server.wait()


def _spec(**flavor):
    return objects.RequestSpec(flavor=objects.Flavor(
        **dict({'vcpus': 1, 'memory_mb': 64}, **flavor)))


def _call(client, method, **kwargs):
    return client.call(CTXT, method, **kwargs)


def test_unknown_method_lists_what_is_served(client):
    with pytest.raises(exception.InvalidField) as info:
        _call(client, 'select_destination', spec_obj=_spec())
    assert 'no such method' in str(info.value)
    assert 'select_destinations' in str(info.value)


def test_unsupported_version_says_which_are(client):
    with pytest.raises(exception.InvalidRequest,
                       match=r'serves 1\.0 to 1\.[0-9]'):
        client.prepare(version='1.9').call(CTXT, 'select_destinations',
                                           spec_obj=_spec())


def test_unknown_argument_is_named(client):
    with pytest.raises(exception.InvalidField) as info:
        _call(client, 'select_destinations', spec_obj=_spec(), colour=1)
    assert info.value.kwargs['field'] == 'colour'
    assert 'accepted: spec_obj, instance_uuids' in str(info.value)


def test_fractional_vcpus_are_refused_not_truncated(client):
    # sent as a primitive: the client's own object would truncate first
    primitive = _spec().obj_to_primitive()
    primitive['scheduler_object.data']['flavor'][
        'scheduler_object.data']['vcpus'] = 1.5
    with pytest.raises(exception.InvalidField) as info:
        _call(client, 'select_destinations', spec_obj=primitive)
    assert info.value.kwargs['field'] == 'spec_obj.flavor.vcpus'


def test_too_many_instances_answer_at_once(client):
    spec = _spec()
    spec.num_instances = 10000000
    with pytest.raises(exception.InvalidField,
                       match='max_instances_per_request'):
        _call(client, 'select_destinations', spec_obj=spec)


@pytest.mark.parametrize('error, expected', [
    (sa_exc.OperationalError(SQL, PARAMS, Exception('server closed')),
     exception.DatabaseUnavailable),
    (db_exc.DBConnectionError(Exception(SQL + ' ' + str(PARAMS))),
     exception.DatabaseUnavailable),
    (db_exc.DBError(sa_exc.IntegrityError(SQL, PARAMS, Exception('null'))),
     exception.DatabaseError),
])
def test_database_errors_carry_no_sql(client, endpoint, monkeypatch,
                                      caplog, error, expected):
    def fail(*args, **kwargs):
        raise error
    monkeypatch.setattr(endpoint.driver, 'select_destinations', fail)
    with caplog.at_level(logging.INFO):
        with pytest.raises(expected) as info:
            _call(client, 'select_destinations', spec_obj=_spec())
    said = str(info.value)
    assert 'SELECT' not in said and 'param-value-42' not in said
    assert 'param-value-42' in caplog.text   # the detail is in the log
    assert 'Traceback' not in caplog.text


def test_bad_cast_is_one_warning_and_the_worker_serves_on(client, caplog):
    with caplog.at_level(logging.WARNING):
        client.cast(CTXT, 'update_resource_stats', name='h1',
                    stats={'vcpus': float('nan')})
        waiting.wait_for(lambda: _rejections(caplog), 10,
                         'the cast rejected in the log')
        # the worker is alive and answers
        with pytest.raises(exception.NoValidHost):
            _call(client, 'select_destinations', spec_obj=_spec())
    warnings = _rejections(caplog)
    assert len(warnings) == 1 and 'stats.vcpus' in warnings[0]
    assert 'Traceback' not in caplog.text


def _rejections(caplog):
    return [r.getMessage() for r in caplog.records
            if 'update_resource_stats' in r.getMessage()]


def _dump(db):
    with db.reader() as session:
        return {table.name: sorted(map(tuple, session.execute(
            sa.select(table)).all()), key=repr)
            for table in models.metadata.sorted_tables}


@pytest.mark.parametrize('method, args', [
    ('update_resource_stats', {'name': 'h1', 'stats': {'vcpus': 1.5}}),
    ('update_resource_stats', {'name': 'h1', 'stats': {
        'vcpus': 4, 'updated_at': '9999-12-31T00:00:00Z'}}),
    ('update_aggregates', {'aggregates': [{'uuid': 'not-a-uuid'}]}),
    ('delete_allocations', {'consumer_uuid': ['x'] * 3}),
    ('sync_instance_info', {'host': 'h1', 'instance_uuids': 'nope'}),
    ('delete_instance_info', {'host': 'h1', 'instance_uuid': float('nan')}),
    ('build_failed', {'name': '\ud800'}),
])
def test_a_rejected_cast_changes_no_row(client, db, method, args):
    before = _dump(db)
    # as a call, to know it was processed; the cast path is the same
    try:
        client.call(CTXT, method, **args)
    except exception.InvalidRequest:
        pass
    assert _dump(db) == before


def test_a_call_starts_and_builds_no_thread_of_its_own(client, monkeypatch):
    # oslo.messaging's dispatcher builds a watchdog thread and an event
    # for every message; the call monitor sends the heartbeats instead
    from oslo_messaging.rpc import dispatcher as rpc_dispatcher

    def no_thread(*args, **kwargs):
        raise AssertionError('a thread built for one message')
    monkeypatch.setattr(rpc_dispatcher, 'threading',
                        types.SimpleNamespace(Thread=no_thread))
    monkeypatch.setattr(rpc_dispatcher, 'eventletutils',
                        types.SimpleNamespace(Event=no_thread))
    assert _call(client, 'get_service_versions') == []
    with pytest.raises(exception.InvalidField):
        _call(client, 'select_destination', spec_obj=_spec())


def test_a_message_the_transport_read_is_walked_once(client, monkeypatch):
    """The transport states the length of the text it read a message
    from: a valid message's arguments pass the validator's one pass, and
    the limits' Python walk does not run (doc/source/decisions/
    validator.rst)."""
    from scheduler.edge import walk
    walked = []
    real = walk.check_structure

    def recording(value, path, *rest):
        walked.append(path)
        return real(value, path, *rest)
    monkeypatch.setattr(walk, 'check_structure', recording)
    _call(client, 'update_resource_stats', name='walked-once', stats={
        'vcpus': 2, 'memory_mb': 64, 'local_gb': 1})
    assert walked == []
    with pytest.raises(exception.InvalidField, match='stats.vcpus'):
        _call(client, 'update_resource_stats', name='walked-once', stats={
            'vcpus': 1.5, 'memory_mb': 64, 'local_gb': 1})
    assert walked == ['name', 'stats']
