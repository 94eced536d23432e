"""SchedulerClient end to end in one process: a real SchedulerManager served
over the in-process kombu+memory transport, SQLite underneath.

One server is shared by the module (starting and stopping one costs about
a second); each test reports and forces its own hosts so tests stay
independent.
"""

import logging
import types
from unittest import mock

import pytest

from scheduler.service import composition
from scheduler.db import claims
from scheduler import conf as sched_conf
from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.rpc import messaging
from scheduler.client import SchedulerClient
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.db import provider_reads
from tests import waiting

UUID1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
UUID2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
CTXT = sched_context.RequestContext(project_id='p1', user_id='u1',
                                    roles=['service'])
HOST = {'vcpus': 8, 'memory_mb': 16384, 'local_gb': 500}
FLAVOR = {'vcpus': 2, 'memory_mb': 4096, 'root_gb': 20}


def _config(url):
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('connection', url, 'database')
    conf.set_override('transport_url', messaging.EMBEDDED_TRANSPORT_URL)
    conf.set_override('heartbeat_timeout_threshold', 0,
                      'oslo_messaging_rabbit')
    return conf


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    url = 'sqlite:///' + str(tmp_path_factory.mktemp('client') / 'db.sqlite')
    conf = _config(url)
    db = db_api.Database(conf)
    migration.db_sync(db)
    transport = messaging.get_transport(conf)
    endpoint = composition.build_manager(conf, db_api.Database(conf))
    server = messaging.get_server(conf, transport, [endpoint])
    server.start()
    client = SchedulerClient(conf, transport=transport)
    yield types.SimpleNamespace(conf=conf, db=db, client=client,
                                transport=transport, url=url,
                                endpoint=endpoint)
    server.stop()
    server.wait()
    transport.cleanup()
    endpoint.db.dispose()
    db.dispose()


def _report(cloud, host, **stats):
    """Report ``host`` and have the worker read it now (a report
    reaches decisions with the worker's next poll otherwise)."""
    cloud.client.update_resource_stats(CTXT, (host, host),
                                       dict(HOST, **stats))
    provider = waiting.wait_for(
        lambda: provider_reads.find_provider(cloud.db, host))
    cloud.endpoint.host_cache.refresh(force=True)
    return provider


def _consumers_on(cloud, host):
    return {a['consumer_uuid']
            for a in claims.list_allocations(cloud.db, host=host)}


def test_report_then_place_with_a_legacy_dict(cloud):
    provider = _report(cloud, 'legacy-host', availability_zone='az1')
    assert provider['reported_at'] is not None  # stamped by the client
    spec = {'instance_type': dict(FLAVOR, name='m1.medium'),
            'instance_properties': {'project_id': 'p1',
                                    'availability_zone': 'az1'},
            'num_instances': 1, 'instance_uuids': [UUID1]}
    [[selection]] = cloud.client.select_destinations(
        CTXT, spec, {'force_hosts': ['legacy-host']})
    assert isinstance(selection, objects.Selection)
    assert selection.host == 'legacy-host'
    assert selection.compute_node_uuid == provider['uuid']
    assert selection.allocation == {'VCPU': 2, 'MEMORY_MB': 4096,
                                    'DISK_GB': 20}
    assert _consumers_on(cloud, 'legacy-host') == {UUID1}


def test_place_with_a_request_spec_object(cloud):
    _report(cloud, 'object-host')
    spec = objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=512),
                               force_hosts=['object-host'])
    [[selection]] = cloud.client.select_destinations(
        CTXT, spec, instance_uuids=[UUID2])
    assert (selection.host, selection.instance_uuid) == ('object-host',
                                                         UUID2)
    cloud.client.delete_allocations(CTXT, UUID2)
    waiting.wait_for(lambda: not _consumers_on(cloud, 'object-host'))


def test_alternates_cross_the_wire(cloud):
    for host in ('alt-a', 'alt-b', 'alt-c'):
        _report(cloud, host, availability_zone='alt-zone')
    spec = {'instance_type': FLAVOR, 'num_instances': 2}
    result = cloud.client.select_destinations(
        CTXT, spec, {'availability_zone': 'alt-zone'},
        return_alternates=True)
    assert [len(s) for s in result] == [3, 3]
    for chosen, *alternates in result:
        assert all(a.is_alternate and a.allocation_id is None
                   for a in alternates)
        assert chosen.host not in {a.host for a in alternates}


def test_no_valid_host_arrives_as_the_scheduler_class(cloud):
    _report(cloud, 'nvh-host', availability_zone='nvh-zone')
    spec = {'instance_type': dict(FLAVOR, vcpus=64)}
    with pytest.raises(exception.NoValidHost) as info:
        cloud.client.select_destinations(CTXT, spec,
                                         {'availability_zone': 'nvh-zone'})
    error = info.value
    assert type(error) is exception.NoValidHost
    assert 'ResourceFitFilter (VCPU: 1)' in error.reason
    assert 'nvh-host' not in error.reason
    assert str(error).startswith('No valid host was found. ')
    assert 'Traceback' not in str(error)
    steps = {s['filter']: s for s in error.diagnosis['steps']}
    assert steps['ResourceFitFilter']['hosts_out'] == 1


def test_admin_caller_sees_host_names_over_the_wire(cloud):
    _report(cloud, 'admin-host', availability_zone='admin-zone')
    with pytest.raises(exception.NoValidHost) as info:
        cloud.client.select_destinations(
            sched_context.get_admin_context(),
            {'instance_type': dict(FLAVOR, vcpus=64)},
            {'availability_zone': 'admin-zone'})
    assert 'admin-host' in info.value.reason


def test_server_side_validation_error_names_the_field(cloud):
    spec = {'instance_type': FLAVOR}
    with pytest.raises(exception.InvalidField) as info:
        cloud.client.select_destinations(CTXT, spec,
                                         instance_uuids=['not-a-uuid'])
    assert info.value.kwargs['field'] == 'instance_uuids[0]'
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize('args, kwargs, field', [
    ((42,), {}, 'spec'),
    ((objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=1)),
      {'force_hosts': ['h1']}), {}, 'filter_properties'),
    (({'instance_type': FLAVOR, 'bogus': 1},), {}, 'request_spec.bogus'),
    (({'instance_type': {'vcpus': 'two', 'memory_mb': 1}},), {},
     'request_spec.instance_type.vcpus'),
], ids=['not-a-spec', 'filter-properties-with-object', 'unknown-key',
        'ill-typed-flavor'])
def test_select_destinations_validates_before_sending(cloud, args, kwargs,
                                                      field):
    with mock.patch.object(cloud.client.api, 'select_destinations') as send:
        with pytest.raises(exception.InvalidField) as info:
            cloud.client.select_destinations(CTXT, *args, **kwargs)
    send.assert_not_called()
    assert info.value.kwargs['field'] == field


@pytest.mark.parametrize('name, stats, field', [
    ('', HOST, 'name'),
    (('h1',), HOST, 'name'),
    ('h1', dict(HOST, vcpus='many'), 'stats.vcpus'),
    ('h1', dict(HOST, color='red'), 'stats.color'),
    ('h1', None, 'stats'),
])
def test_update_resource_stats_validates_before_sending(cloud, name, stats,
                                                        field):
    with mock.patch.object(cloud.client.api,
                           'update_resource_stats') as send:
        with pytest.raises(ValueError) as info:
            cloud.client.update_resource_stats(CTXT, name, stats)
    send.assert_not_called()
    assert info.value.kwargs['field'] == field


def test_sync_instance_info_releases_unreported_claims(cloud, caplog):
    caplog.set_level(logging.INFO, logger='scheduler.manager')
    cloud.conf.set_override('unconfirmed_claim_grace_period', 0,
                            'scheduler')
    try:
        _report(cloud, 'sync-host', availability_zone='sync-zone')
        result = cloud.client.select_destinations(
            CTXT, {'instance_type': FLAVOR, 'num_instances': 2},
            {'availability_zone': 'sync-zone'})
        kept, dropped = [s[0].instance_uuid for s in result]
        cloud.client.sync_instance_info(CTXT, 'sync-host', [kept])
        waiting.wait_for(lambda: _consumers_on(cloud, 'sync-host') == {kept})
        # the worker says so after the release committed: within the test
        # (a line logged after it ended went to a closed capture)
        waiting.wait_for(lambda: 'stale allocation rows on sync-host'
                         in caplog.text, what='the release logged')
    finally:
        cloud.conf.clear_override('unconfirmed_claim_grace_period',
                                  'scheduler')


def test_version_cap_stops_newer_casts_but_not_select(cloud):
    capped_conf = _config(cloud.url)
    capped_conf.set_override('scheduler', '1.0', 'upgrade_levels')
    capped = SchedulerClient(capped_conf, transport=cloud.transport)
    _report(cloud, 'capped-host', availability_zone='capped-zone')
    with pytest.raises(exception.InvalidRequest):
        capped.delete_allocations(CTXT, UUID1)
    with pytest.raises(exception.InvalidRequest):
        capped.sync_instance_info(CTXT, 'capped-host', [])
    [[selection]] = capped.select_destinations(
        CTXT, {'instance_type': FLAVOR},
        {'availability_zone': 'capped-zone'})
    assert selection.host == 'capped-host'
