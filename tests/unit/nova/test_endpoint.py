"""Nova's messages through a worker's nova server: NovaDispatcher, the
edge, policy and a real SchedulerManager on SQLite, at each RPC pin.

The messages are those of ``test_wire`` (nova 34's rpcapi, recorded);
the hosts are nova trackers' reports (``tests.unit.fixtures.nova``).
"""

import copy
import datetime
import time
import types

import oslo_messaging
import pytest
from oslo_messaging.rpc import dispatcher as rpc_dispatcher

from scheduler.db import aggregates as db_aggregates
from scheduler.db import claims
from scheduler.db import instances as db_instances
from scheduler import exception
from scheduler.rpc import late_ack
from scheduler.nova import endpoint as nova_endpoint
from scheduler.nova import wire as nova_wire
from scheduler.edge import validation
from scheduler.service import startup_checks
from scheduler.service import composition
from scheduler import context as sched_context
from tests.unit.fixtures.nova import compute_nodes
from tests.unit.nova import test_wire as recorded
from tests import waiting

CELL = 'c0ffee00-0000-4000-8000-000000000001'
SERVICE = sched_context.RequestContext(project_id='p1', roles=['service'])


@pytest.fixture
def manager(conf, db):
    now = datetime.datetime.now(datetime.timezone.utc).strftime(
        '%Y-%m-%dT%H:%M:%SZ')
    manager = composition.build_manager(conf, db)
    for report in (compute_nodes.LIBVIRT_NUMA_WIRE,
                   compute_nodes.PLAIN_WIRE):
        report = copy.deepcopy(report)
        data = report['nova_object.data']
        data['updated_at'] = now
        manager.update_resource_stats(
            SERVICE, [data['host'], data['hypervisor_hostname']], report)
    yield manager
    manager.stop()


@pytest.fixture
def nova(conf, manager):
    conf.set_override('cell_uuid', CELL, 'nova')
    conf.set_override('max_attempts', 2, 'scheduler')
    return nova_endpoint.NovaEndpoint(conf, manager,
                                      validation.EdgeCheck(conf.limits))


def send(endpoint, method, version, args, cast=False, roles=None,
         client_timeout=None, heartbeats=None):
    """``method`` as nova's client sends it, through NovaDispatcher."""
    worker = nova_endpoint.NovaDispatcher(
        [endpoint], nova_wire.NovaSerializer(endpoint.conf.nova.
                                             granted_roles),
        endpoint.conf.limits, 'test-host')
    ctxt = dict(recorded.CONTEXT)
    if roles is not None:
        ctxt['roles'] = roles
    incoming = types.SimpleNamespace(
        message={'method': method, 'version': version,
                 'args': copy.deepcopy(args)},
        ctxt=ctxt, reply_q=None if cast else 'reply',
        client_timeout=client_timeout,
        heartbeat=lambda: heartbeats.append(time.monotonic()))
    try:
        return worker.dispatch(incoming)
    except rpc_dispatcher.ExpectedException as wrapped:
        if cast:
            return None
        raise wrapped.exc_info[1]


@pytest.mark.parametrize('pin', ['4.0', '4.3', '4.4'])
def test_pins_before_4_5_get_one_host_dict_per_instance(nova, db, pin):
    answer = send(nova, 'select_destinations', pin,
                  recorded.select_args(pin))
    assert [sorted(a) for a in answer] == [['host', 'limits',
                                            'nodename']] * 2
    # anti-affinity: one instance on each host
    assert sorted(a['host'] for a in answer) == ['compute-01',
                                                 'compute-02']
    assert set(answer[0]['limits']) == {'vcpu', 'memory_mb', 'disk_gb'}
    consumers = {a['consumer_uuid'] for a in claims.list_allocations(db)}
    assert recorded.UUIDS[0] in consumers and len(consumers) == 2
    if pin == '4.4':
        assert consumers == set(recorded.UUIDS[:2])


def test_4_5_gets_selections_with_alternates(nova, db):
    args = recorded.select_args('4.5', policy=None, num_instances=1)
    [[first, alternate]] = send(nova, 'select_destinations', '4.5', args)
    for sel in (first, alternate):
        assert sel['nova_object.namespace'] == 'nova'
        assert sel['nova_object.data']['cell_uuid'] == CELL
    assert first['nova_object.data']['service_host'] != \
        alternate['nova_object.data']['service_host']
    [claim] = claims.list_allocations(db)[:1]
    assert claim['consumer_uuid'] == recorded.UUIDS[0]


def test_4_5_without_return_objects_gets_dicts_and_no_alternates(nova):
    args = dict(recorded.select_args('4.5', policy=None, num_instances=1),
                return_objects=False)
    [answer] = send(nova, 'select_destinations', '4.5', args)
    assert answer['host'] in ('compute-01', 'compute-02')


def test_affinity_places_together(nova):
    answer = send(nova, 'select_destinations', '4.5',
                  recorded.select_args('4.5', policy='affinity'))
    hosts = {per[0]['nova_object.data']['service_host'] for per in answer}
    assert len(answer) == 2 and len(hosts) == 1


def test_no_valid_host_is_nova_s(nova, caplog):
    caplog.set_level('INFO')
    args = recorded.select_args('4.5', policy=None, num_instances=1)
    data = args['spec_obj']['nova_object.data']['flavor']['nova_object.data']
    data['memory_mb'] = 10 ** 7
    with pytest.raises(nova_wire.NoValidHost) as caught:
        send(nova, 'select_destinations', '4.5', args)
    assert type(caught.value).__module__ == 'nova.exception'
    # nova shows the reason to the instance's owner: nova-scheduler's
    # words; the diagnosis (which may name hosts) is in the log
    assert caught.value.kwargs['reason'] == nova_wire.NO_VALID_HOST_REASON
    assert 'MEMORY_MB' in caplog.text


def _claims_of(db, consumer):
    return {(a['host'], a['resource_class'], a['amount'])
            for a in claims.list_allocations(db, consumer_uuid=consumer)}


@pytest.mark.parametrize('pin', ['4.0', '4.3', '4.4', '4.5'])
def test_a_resize_moves_the_instance_s_claim(nova, db, pin, caplog):
    caplog.set_level('INFO')
    boot = recorded.select_args('4.4', policy=None, num_instances=1)
    [booted] = send(nova, 'select_destinations', '4.4', boot)
    args = recorded.resize_args(pin, recorded.cell_destination(),
                                source=booted['host'])
    answer = send(nova, 'select_destinations', pin, args)
    host = answer[0][0]['nova_object.data']['service_host'] \
        if pin == '4.5' else answer[0]['host']
    assert {booted['host'], host} == {'compute-01', 'compute-02'}
    # one claim, of the new flavor, on the new host only
    assert _claims_of(db, recorded.UUIDS[0]) == {
        (host, 'VCPU', 2), (host, 'MEMORY_MB', 1024), (host, 'DISK_GB', 2)}
    # a flavor that fits nowhere: NoValidHost, the claim stays
    again = recorded.resize_args(pin, recorded.cell_destination(),
                                 source=host, memory_mb=10 ** 7)
    with pytest.raises(nova_wire.NoValidHost):
        send(nova, 'select_destinations', pin, again)
    assert 'MEMORY_MB' in caplog.text
    assert {h for h, _rc, _n in _claims_of(db, recorded.UUIDS[0])} == {host}


def test_a_resize_confined_to_another_cell_is_no_valid_host(nova, db,
                                                            caplog):
    caplog.set_level('INFO')
    args = recorded.resize_args('4.5', recorded.cell_destination(
        '0ff1ce00-0000-4000-8000-000000000002'))
    with pytest.raises(nova_wire.NoValidHost):
        send(nova, 'select_destinations', '4.5', args)
    assert 'cell_uuid' in caplog.text
    assert claims.list_allocations(db) == []


def test_policy_checks_nova_s_caller(nova, conf):
    conf.set_override('granted_roles', [], 'nova')
    with pytest.raises(exception.Forbidden, match='select_destinations'):
        send(nova, 'select_destinations', '4.5', recorded.select_args('4.5'))
    assert send(nova, 'select_destinations', '4.5',
                recorded.select_args('4.5', policy=None, num_instances=1),
                roles=['admin'])


def test_unknown_argument_is_an_invalid_request(nova):
    args = dict(recorded.select_args('4.5'), host_name='x')
    with pytest.raises(exception.InvalidRequest, match='host_name'):
        send(nova, 'select_destinations', '4.5', args)


def test_the_five_casts_are_stored(nova, db):
    send(nova, 'update_aggregates', '4.1',
         recorded.CASTS['update_aggregates'], cast=True)
    [agg] = db_aggregates.load_aggregate_changes(db)
    assert agg['hosts'] == ['compute-02'] and not agg['deleted']
    # the zone an aggregate gives reaches nova's Selection
    args = recorded.select_args('4.5', policy=None, num_instances=1)
    args['spec_obj']['nova_object.data']['availability_zone'] = 'az1'
    [[first]] = send(nova, 'select_destinations', '4.5',
                     dict(args, return_alternates=False))
    assert (first['nova_object.data']['service_host'],
            first['nova_object.data']['availability_zone']) == (
                'compute-02', 'az1')
    send(nova, 'delete_aggregate', '4.1',
         recorded.CASTS['delete_aggregate'], cast=True)
    assert db_aggregates.load_aggregate_changes(db)[0]['deleted']
    send(nova, 'update_instance_info', '4.2',
         recorded.CASTS['update_instance_info'], cast=True)
    assert [i['uuid'] for i in db_instances.instances_on(
        db, 'compute-02')] == [recorded.UUIDS[0]]
    send(nova, 'delete_instance_info', '4.2',
         recorded.CASTS['delete_instance_info'], cast=True)
    assert db_instances.instances_on(db, 'compute-02') == []
    send(nova, 'sync_instance_info', '4.2',
         recorded.CASTS['sync_instance_info'], cast=True)


def test_the_call_monitor_is_honoured(nova, monkeypatch):
    heartbeats = []
    real = nova.manager.serve

    def slow(request):
        time.sleep(1.3)     # longer than one heartbeat interval, on purpose
        return real(request)

    monkeypatch.setattr(nova.manager, 'serve', slow)
    send(nova, 'select_destinations', '4.5',
         recorded.select_args('4.5', policy=None, num_instances=1),
         client_timeout=2, heartbeats=heartbeats)
    assert len(heartbeats) == 1


class _NovaContext(oslo_messaging.NoOpSerializer):
    """What nova's client puts on the wire for a context: its dict."""

    def serialize_context(self, ctxt):
        return ctxt


def test_servers_only_when_enabled(conf, manager, transport):
    assert nova_endpoint.servers(conf, transport, manager) == []
    conf.set_override('enabled', True, 'nova')
    with pytest.raises(exception.ConfigInvalid, match='cell_uuid'):
        nova_endpoint.servers(conf, transport, manager)
    conf.set_override('cell_uuid', CELL, 'nova')
    # test_placement: the claims written back to Placement
    conf.set_override('placement_write_back', False, 'nova')
    with pytest.raises(exception.ConfigInvalid, match='scheduler_v1'):
        nova_endpoint.servers(conf, transport, manager)
    conf.set_override('topic', 'scheduler_v1', 'scheduler')
    [server] = nova_endpoint.servers(conf, transport, manager)
    # acknowledged once answered: a dead worker's calls go to another
    assert isinstance(server, late_ack.CallServer)
    server.start()
    try:
        client = oslo_messaging.get_rpc_client(
            transport, oslo_messaging.Target(
                exchange='nova', topic='scheduler', version='4.0'),
            serializer=_NovaContext())
        fanout = client.prepare(fanout=True, version='4.1')
        fanout.cast(recorded.CONTEXT, 'update_aggregates',
                    **recorded.CASTS['update_aggregates'])
        answer = client.prepare(version='4.5', timeout=30).call(
            recorded.CONTEXT, 'select_destinations',
            **recorded.select_args('4.5', policy=None, num_instances=1))
    finally:
        server.stop()
        server.wait()
    assert answer[0][0]['nova_object.name'] == 'Selection'
    # the fanout cast has a queue of its own: it may land after the call
    waiting.wait_for(lambda: db_aggregates.load_aggregate_changes(
        manager.db), 10, 'the fanout cast stored')


@pytest.mark.parametrize('exchange, topic', [
    ('nova', 'scheduler'),          # one exchange, one topic
    ('scheduler', 'scheduler'),     # RabbitMQ: one queue all the same
    ('scheduler', 'sched'),         # nova's topic is the report topic
])
def test_one_queue_per_api(conf, manager, transport, exchange, topic):
    conf.set_override('enabled', True, 'nova')
    conf.set_override('cell_uuid', CELL, 'nova')
    conf.set_override('control_exchange', exchange)
    conf.set_override('topic', topic, 'scheduler')
    conf.set_override('topic', 'scheduler' if topic == 'scheduler'
                      else 'sched_reports', 'nova')
    with pytest.raises(exception.ConfigInvalid, match='one queue'):
        nova_endpoint.servers(conf, transport, manager)
    # scheduler-server says so before it starts a worker
    assert 'one queue' in startup_checks.configuration_problem(conf)


def test_a_cast_refused_is_dropped_and_the_worker_goes_on(nova, db):
    assert send(nova, 'update_aggregates', '4.1',
                {'aggregates': [{'nova_object.name': 'Aggregate',
                                 'nova_object.data': {'name': 'a'}}]},
                cast=True) is None
    assert db_aggregates.load_aggregate_changes(db) == []



def test_the_plugins_check_nova_s_request_too(conf, db):
    conf.set_override('enabled_filters', ['ResourceFitFilter',
                                          'NUMATopologyFilter'],
                      'filter_scheduler')
    conf.set_override('cell_uuid', CELL, 'nova')
    manager = composition.build_manager(conf, db)
    endpoint = nova_endpoint.NovaEndpoint(
        conf, manager, validation.EdgeCheck(conf.limits))
    args = recorded.select_args('4.5', policy=None, num_instances=1)
    flavor = args['spec_obj']['nova_object.data']['flavor']
    flavor['nova_object.data']['extra_specs'] = {'hw:numa_nodes': 'two'}
    try:
        with pytest.raises(exception.InvalidRequest,
                           match='hw:numa_nodes'):
            send(endpoint, 'select_destinations', '4.5', args)
    finally:
        manager.stop()
