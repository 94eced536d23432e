"""The endpoint and the client with resource groups: bad groups are an
expected InvalidRequest naming the field (and the client refuses them
before sending); a request of storage groups alone needs no flavor; a bad
generic report is dropped with a warning."""

import logging

import pytest
from oslo_messaging.rpc import dispatcher as rpc_dispatcher

from scheduler.service import composition
from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.client import SchedulerClient
from scheduler.db import provider_reads
from tests.unit.edge import edge

CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])
VOLUME = {'name': 'volume', 'kind': 'storage', 'resources': {'DISK_GB': 10}}


@pytest.fixture
def manager(conf, db):
    manager = composition.build_manager(conf, db)
    yield manager
    manager.stop()


def _groups_spec(*groups, **fields):
    return objects.RequestSpec(
        resource_groups=[objects.ResourceGroup(**g) for g in groups],
        **fields)


def test_bad_group_is_an_expected_invalid_request(manager):
    spec = _groups_spec(dict(VOLUME, required_traits=['ssd']))
    with pytest.raises(exception.InvalidRequest) as info:
        edge.send(manager, 'select_destinations', cast=False,
                  spec_obj=spec)
    error = info.value
    assert error.kwargs['field'] == \
        'spec_obj.resource_groups[0].required_traits[0]'


def test_volume_alone_needs_no_flavor(manager):
    manager.update_resource_stats(CTXT, 'cinder1', {
        'kind': 'storage', 'inventories': {'DISK_GB': {'total': 100}}})
    manager.report_writer.flush()
    [[selection]] = manager.select_destinations(
        CTXT, spec_obj=_groups_spec(VOLUME))
    assert selection.provider_for('volume')[0] == 'cinder1'
    assert selection.allocation == {'DISK_GB': 10}


def test_no_flavor_and_no_groups_is_still_refused(manager):
    with pytest.raises(rpc_dispatcher.ExpectedException) as info:
        manager.select_destinations(CTXT, spec_obj=objects.RequestSpec())
    assert info.value.exc_info[1].kwargs['field'] == 'spec_obj.flavor'


def test_bad_generic_report_is_dropped_with_a_warning(manager, db, caplog):
    with caplog.at_level(logging.WARNING):
        edge.send(manager, 'update_resource_stats', name='cinder1', stats={
            'kind': 'storage', 'inventories': {'GOLD': {'total': 1}}})
    manager.report_writer.flush()
    assert provider_reads.list_providers(db) == []
    assert 'stats.inventories.GOLD' in caplog.text


def test_client_refuses_bad_groups_and_reports_before_sending(conf,
                                                              transport):
    client = SchedulerClient(conf, transport=transport)
    spec = _groups_spec(VOLUME, locality=[objects.LocalityRule(
        groups=['volume', 'port'], scope='rack')])
    with pytest.raises(exception.InvalidField) as exc:
        client.select_destinations(CTXT, spec)
    assert exc.value.kwargs['field'] == 'spec.locality[0].groups'
    with pytest.raises(exception.InvalidField) as exc:
        client.update_resource_stats(CTXT, 'cinder1', {
            'kind': 'storage', 'traits': ['CUSTOM_ssd']})
    assert exc.value.kwargs['field'] == 'stats.traits[0]'


def _wire_versions(result):
    serializer = objects.SchedulerObjectSerializer()
    return {s['scheduler_object.version']
            for per in serializer.serialize_entity(None, result)
            for s in per}


def test_replies_without_groups_go_at_the_version_old_callers_read(manager):
    manager.update_resource_stats(CTXT, 'h1', {
        'vcpus': 8, 'memory_mb': 8192, 'local_gb': 100})
    manager.update_resource_stats(CTXT, 'cinder1', {
        'kind': 'storage', 'inventories': {'DISK_GB': {'total': 100}}})
    manager.report_writer.flush()
    classic = manager.select_destinations(CTXT, spec_obj=objects.RequestSpec(
        flavor=objects.Flavor(vcpus=1, memory_mb=512)))
    assert _wire_versions(classic) == {'1.0'}
    grouped = manager.select_destinations(CTXT, spec_obj=_groups_spec(
        VOLUME))
    assert _wire_versions(grouped) == {'1.1'}
    # what an old caller rebuilds from the 1.0 primitive still answers
    rebuilt = objects.SchedulerObjectSerializer().deserialize_entity(
        None, objects.SchedulerObjectSerializer().serialize_entity(
            None, classic))
    assert rebuilt[0][0].provider_for('compute')[0] == 'h1'
