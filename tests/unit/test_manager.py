"""SchedulerManager, the RPC endpoint, behind the RPC edge: calls answer or
raise an expected InvalidRequest naming the field; casts with bad input
log one warning and never raise; an out-of-date report never moves a host
back in time."""

import datetime
import logging

import pytest
from oslo_messaging.rpc import dispatcher as rpc_dispatcher

from scheduler.db import claims
from scheduler import context as sched_context
from scheduler import exception
from scheduler.model import names
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.db import provider_reads
from tests.unit.edge import edge

UUID1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
UUID2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])
HOST = {'vcpus': 8, 'memory_mb': 16384, 'local_gb': 500}


def _spec(**flavor):
    flavor = flavor or {'vcpus': 1, 'memory_mb': 512}
    return objects.RequestSpec(flavor=objects.Flavor(**flavor))


def _expected_error(call, *args, **kwargs):
    """The exception an endpoint raised as an *expected* one."""
    with pytest.raises(rpc_dispatcher.ExpectedException) as info:
        call(*args, **kwargs)
    return info.value.exc_info[1]


def _hosts(db):
    return {p['host']: p for p in provider_reads.list_providers(db)}


BAD_CALLS = [
    ({'spec_obj': None}, 'spec_obj'),
    ({'spec_obj': {'instance_type': {'vcpus': 1}}}, 'spec_obj'),
    ({'spec_obj': objects.RequestSpec()}, 'spec_obj.flavor'),
    ({'spec_obj': _spec(vcpus=1)}, 'spec_obj.flavor.memory_mb'),
    ({'spec_obj': _spec(), 'instance_uuids': ['not-a-uuid']},
     'instance_uuids[0]'),
    ({'spec_obj': _spec(), 'instance_uuids': [UUID1, 42]},
     'instance_uuids[1]'),
    ({'spec_obj': _spec(), 'instance_uuids': UUID1}, 'instance_uuids'),
    ({'spec_obj': _spec(), 'return_alternates': 'yes'}, 'return_alternates'),
    ({'spec_obj': _spec(), 'return_alternates': 1}, 'return_alternates'),
]


@pytest.mark.parametrize('kwargs, field', BAD_CALLS,
                         ids=[c[1] + '-%d' % i
                              for i, c in enumerate(BAD_CALLS)])
def test_select_destinations_rejects_bad_arguments(manager, kwargs, field):
    with pytest.raises(exception.InvalidRequest) as info:
        edge.send(manager, 'select_destinations', cast=False, **kwargs)
    error = info.value
    assert error.kwargs['field'] == field
    assert field in str(error)


def test_select_destinations_with_a_minimal_spec(manager, db):
    manager.update_resource_stats(CTXT, 'h1', dict(HOST))
    # fields with defaults (num_instances, root_gb, extra_specs ...) unset
    [[selection]] = manager.select_destinations(CTXT, _spec(),
                                                instance_uuids=[UUID1])
    assert (selection.host, selection.instance_uuid) == ('h1', UUID1)


def test_no_valid_host_is_an_expected_answer(manager):
    manager.update_resource_stats(CTXT, 'h1', dict(HOST))
    error = _expected_error(manager.select_destinations, CTXT,
                            _spec(vcpus=64, memory_mb=512))
    assert isinstance(error, exception.NoValidHost)
    assert 'ResourceFitFilter' in error.reason


def test_update_resource_stats_records_the_host(manager, db):
    manager.update_resource_stats(CTXT, ['h1', 'n1'], dict(
        HOST, vcpus_used=2, availability_zone='az1'))
    provider = _hosts(db)['h1']
    assert provider['nodename'] == 'n1'
    assert provider['availability_zone'] == 'az1'
    vcpu = provider['inventories'][rcs.VCPU]
    assert (vcpu['total'], vcpu['reported_used']) == (8, 2)
    # [scheduler] default_cpu_allocation_ratio applies when none reported
    assert vcpu['capacity'] == 32


BAD_REPORTS = [
    (None, HOST, 'name'),
    ('', HOST, 'name'),
    (['h1'], HOST, 'name'),
    (['h1', 7], HOST, 'name'),
    ('h1\nforged', HOST, 'name'),
    (['h1', 'n\x00'], HOST, 'name[1]'),
    ('h' * 256, HOST, 'name'),
    ('h1', {}, 'stats.vcpus'),
    ('h1', dict(HOST, cpu_allocation_ratio=1e308),
     'stats.cpu_allocation_ratio'),
    ('h1', 'lots', 'stats'),
    ('h1', dict(HOST, vcpus='many'), 'stats.vcpus'),
    ('h1', dict(HOST, gpus=4), 'stats.gpus'),
    ('h1', dict(HOST, host='h2'), 'stats.host'),
]


@pytest.mark.parametrize('name, stats, field', BAD_REPORTS,
                         ids=[c[2] + '-%d' % i
                              for i, c in enumerate(BAD_REPORTS)])
def test_bad_report_logs_a_warning_and_is_dropped(manager, db, caplog,
                                                  name, stats, field):
    with caplog.at_level(logging.WARNING):
        assert edge.send(manager, 'update_resource_stats', name=name,
                         stats=stats) is None
    [record] = [r for r in caplog.records
                if r.name == 'scheduler.edge.dispatcher']
    assert record.levelno == logging.WARNING
    assert 'Rejected update_resource_stats (cast)' in record.getMessage()
    assert field in record.getMessage()
    assert _hosts(db) == {}


def _at(minute):
    return datetime.datetime(2026, 3, 1, 12, minute,
                             tzinfo=datetime.timezone.utc)


def test_out_of_date_report_does_not_overwrite_a_newer_one(manager, db):
    manager.update_resource_stats(CTXT, 'h1', dict(HOST, vcpus=16,
                                                   updated_at=_at(10)))
    manager.update_resource_stats(CTXT, 'h1', dict(HOST, vcpus=4,
                                                   updated_at=_at(5)))
    manager.update_resource_stats(CTXT, 'h1', dict(HOST, vcpus=2,
                                                   updated_at=_at(10)))
    provider = _hosts(db)['h1']
    assert provider['inventories'][rcs.VCPU]['total'] == 16
    assert provider['reported_at'] == _at(10).replace(tzinfo=None)
    manager.update_resource_stats(CTXT, 'h1', dict(HOST, vcpus=8,
                                                   updated_at=_at(11)))
    assert _hosts(db)['h1']['inventories'][rcs.VCPU]['total'] == 8


def test_delete_allocations_releases_and_rejects_non_uuids(manager, db,
                                                           caplog):
    manager.update_resource_stats(CTXT, 'h1', dict(HOST))
    manager.select_destinations(CTXT, _spec(), instance_uuids=[UUID1])
    with caplog.at_level(logging.WARNING):
        edge.send(manager, 'delete_allocations', consumer_uuid='not-a-uuid')
        edge.send(manager, 'delete_allocations', consumer_uuid=None)
    assert len([r for r in caplog.records if 'Rejected '
                'delete_allocations (cast)' in r.getMessage()]) == 2
    assert len(claims.list_allocations(db)) == 2
    manager.delete_allocations(CTXT, UUID1)
    assert claims.list_allocations(db) == []


@pytest.mark.parametrize('host, uuids', [
    (None, [UUID1]), ('', [UUID1]), ('h1', None), ('h1', ['nope']),
    ('h1', UUID1),
])
def test_sync_instance_info_rejects_bad_input(manager, db, caplog, host,
                                              uuids):
    manager.update_resource_stats(CTXT, 'h1', dict(HOST))
    manager.select_destinations(CTXT, _spec(), instance_uuids=[UUID1])
    with caplog.at_level(logging.WARNING):
        edge.send(manager, 'sync_instance_info', host=host,
                  instance_uuids=uuids)
    assert any('Rejected sync_instance_info (cast)' in r.getMessage()
               for r in caplog.records)
    assert len(claims.list_allocations(db)) == 2


def test_sync_instance_info_releases_claims_of_unreported_instances(
        conf, manager, db):
    conf.set_override('unconfirmed_claim_grace_period', 0, 'scheduler')
    manager.update_resource_stats(CTXT, 'h1', dict(HOST))
    manager.select_destinations(CTXT, _spec(), instance_uuids=[UUID1])
    manager.select_destinations(CTXT, _spec(), instance_uuids=[UUID2])
    manager.sync_instance_info(CTXT, 'h1', [UUID2])
    assert {a['consumer_uuid'] for a in claims.list_allocations(db)} == {
        UUID2}


@pytest.mark.parametrize('name, expected', [
    ('h1', ('h1', 'h1')),
    (['h1', 'n1'], ('h1', 'n1')),
    (('h1', 'n1'), ('h1', 'n1')),
])
def test_parse_name(name, expected):
    assert names.parse_name(name) == expected
