"""Objects survive the wire: primitives at 1.0 and the RPC serializer.

The serializer must turn anything it cannot rebuild (unknown object name,
newer version, ill-typed field, malformed context) into an *expected*
``InvalidRequest``, so the caller gets a clear answer and the worker does
not log a traceback.
"""

import datetime

import pytest
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_utils import timeutils

from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.objects import base

from .. import fakes

UUID1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5f'
UUID2 = '7a2c4d3f-2e3b-4d6c-8f9a-1b2c3d4e5f60'


def _flavor():
    return objects.Flavor(flavorid='42', name='m1.small', vcpus=2,
                          memory_mb=2048, root_gb=20, ephemeral_gb=5,
                          swap=512, extra_specs={'hw:cpu_policy': 'shared'})


def _group():
    return objects.ResourceGroup(
        name='volume', kind='storage', resources={'DISK_GB': 100},
        required_traits=['STORAGE_DISK_SSD'],
        forbidden_traits=['CUSTOM_SLOW'],
        any_traits=[['CUSTOM_GOLD', 'CUSTOM_SILVER']])


def _rule():
    return objects.LocalityRule(groups=['compute', 'volume'], scope='rack',
                                policy='same', hard=False)


def _samples():
    """One instance of every object with *every* field set."""
    return {
        'Flavor': _flavor(),
        'ImageMeta': objects.ImageMeta(
            id='img-1', name='cirros', min_ram=64, min_disk=1,
            properties={'hw_disk_bus': 'virtio', 'os_distro': None}),
        'InstanceGroup': objects.InstanceGroup(
            uuid=UUID2, name='web', policy='anti-affinity',
            rules={'max_server_per_host': '1'}, members=[UUID1],
            hosts=['h1']),
        'SchedulerRetries': objects.SchedulerRetries(
            num_attempts=2, hosts=[['h1', 'n1']]),
        'Destination': objects.Destination(host='h2', node='n2'),
        'RequestSpec': objects.RequestSpec(
            num_instances=1, flavor=_flavor(),
            image=objects.ImageMeta(id='img-1', properties={}),
            availability_zone='az1',
            scheduler_hints={'same_host': [UUID2]},
            instance_group=objects.InstanceGroup(policy='affinity'),
            ignore_hosts=['h3'], force_hosts=['h2'], force_nodes=['n2'],
            requested_destination=objects.Destination(host='h2',
                                                      node=None),
            project_id='p1', user_id='u1', instance_uuids=[UUID1],
            retry=objects.SchedulerRetries(num_attempts=1, hosts=[]),
            is_bfv=True,
            resource_groups=[_group()],
            locality=[_rule()]),
        'ResourceGroup': _group(),
        'LocalityRule': _rule(),
        'ComputeNode': objects.ComputeNode(
            uuid=UUID1, host='h1', hypervisor_hostname='n1', vcpus=8,
            memory_mb=16384, local_gb=500, vcpus_used=1,
            memory_mb_used=512, local_gb_used=10, free_ram_mb=15872,
            free_disk_gb=490, disk_available_least=480, running_vms=1,
            current_workload=0, hypervisor_type='QEMU',
            hypervisor_version=8002000, cpu_info='{"arch": "x86_64"}',
            host_ip='192.0.2.10',
            supported_instances=[['x86_64', 'kvm', 'hvm']],
            stats={'num_instances': '1'}, metrics='[]',
            numa_topology=None,
            pci_device_pools=[{'vendor_id': '8086', 'count': '2'}],
            cpu_allocation_ratio=4.0, ram_allocation_ratio=1.5,
            disk_allocation_ratio=1.0, reserved_host_cpus=1,
            reserved_host_memory_mb=512, reserved_host_disk_mb=0,
            disabled=False, availability_zone='az1',
            updated_at=datetime.datetime(2026, 3, 1, 12, 0,
                                         tzinfo=datetime.timezone.utc),
            kind='compute',
            inventories={'CUSTOM_FPGA_SLOT': {'total': 2.0}},
            used={'CUSTOM_FPGA_SLOT': 1}, traits=['HW_CPU_X86_AVX2'],
            locality={'rack': 'r1', 'row': 'w1'}),
        'Aggregate': objects.Aggregate(
            uuid=UUID2, name='fast-disks', hosts=['h1', 'h2'],
            metadata={'availability_zone': 'az1', 'ssd': 'true'}),
        'InstanceInfo': objects.InstanceInfo(
            uuid=UUID1, host='h1', node='n1', project_id='p1',
            user_id='u1', flavor=_flavor(),
            image_properties={'os_distro': 'ubuntu', 'hw_arch': None},
            task_state=None, group_uuid=UUID2),
        'SelectDestinationsPayload': objects.SelectDestinationsPayload(
            request_id='req-1', project_id='p1', num_instances=1,
            flavor=_flavor(), availability_zone='az1',
            instance_uuids=[UUID1], hosts=['h1'], duration_ms=12.5,
            error=None, error_class=None),
        'Selection': objects.Selection(
            host='h1', nodename='n1', compute_node_uuid=UUID1,
            instance_uuid=UUID2, allocation_id=UUID2,
            allocation={'VCPU': 2}, limits={'VCPU': 32}, weight=0.5,
            is_alternate=False,
            providers={'compute': ['h1', 'n1', UUID1],
                       'volume': ['cinder1', 'pool1', UUID2]}),
    }


SAMPLES = _samples()


def test_samples_cover_every_registered_object():
    assert set(SAMPLES) == set(base.SchedulerObjectRegistry.obj_classes())


@pytest.mark.parametrize('name', sorted(SAMPLES))
def test_sample_sets_every_field(name):
    # A new field must be added to the sample, so its round trip is tested.
    obj = SAMPLES[name]
    assert [f for f in obj.fields if not obj.obj_attr_is_set(f)] == []


#: fields added after 1.0, which a 1.0 primitive leaves out
ADDED_AFTER_1_0 = {'RequestSpec': {'is_bfv', 'resource_groups', 'locality'},
                   'ComputeNode': {'kind', 'inventories', 'used', 'traits',
                                   'locality'},
                   'Selection': {'providers'}}


@pytest.mark.parametrize('name', sorted(SAMPLES))
def test_primitive_round_trip_at_version_1_0(name):
    obj = SAMPLES[name].obj_clone()
    if name == 'RequestSpec':
        # 1.0 cannot carry groups: a backport refuses them (test_backports)
        obj.resource_groups = []
    primitive = obj.obj_to_primitive(target_version='1.0')
    assert primitive['scheduler_object.version'] == '1.0'
    assert primitive['scheduler_object.namespace'] == 'scheduler'
    added = ADDED_AFTER_1_0.get(name, set())
    assert not added & set(primitive['scheduler_object.data'])
    rebuilt = type(obj).obj_from_primitive(primitive)
    for field in added:
        assert not rebuilt.obj_attr_is_set(field)
    name_, _, values = fakes.fields_of(obj)
    assert fakes.fields_of(rebuilt) == (
        name_, '1.0', {k: v for k, v in values.items() if k not in added})


@pytest.mark.parametrize('name', sorted(SAMPLES))
def test_serializer_round_trip(name):
    serializer = objects.SchedulerObjectSerializer()
    obj = SAMPLES[name]
    wire = serializer.serialize_entity(None, obj)
    assert isinstance(wire, dict)
    rebuilt = serializer.deserialize_entity(None, wire)
    assert type(rebuilt) is type(obj)
    assert fakes.fields_of(rebuilt) == fakes.fields_of(obj)


def test_serializer_round_trips_lists_of_selections():
    serializer = objects.SchedulerObjectSerializer()
    result = [[SAMPLES['Selection'], SAMPLES['Selection']]]
    rebuilt = serializer.deserialize_entity(
        None, serializer.serialize_entity(None, result))
    assert fakes.fields_of(rebuilt) == fakes.fields_of(result)


def _wire(obj):
    return objects.SchedulerObjectSerializer().serialize_entity(None, obj)


def _spec_with(**data_changes):
    wire = _wire(SAMPLES['RequestSpec'])
    wire['scheduler_object.data'].update(data_changes)
    return wire


def _renamed(wire, name):
    wire['scheduler_object.name'] = name
    return wire


def _versioned(wire, version):
    wire['scheduler_object.version'] = version
    return wire


@pytest.mark.parametrize('wire, words', [
    (_renamed(_wire(SAMPLES['Destination']), 'NoSuchObject'),
     'unknown object'),
    (_versioned(_wire(SAMPLES['Destination']), '1.7'),
     'unsupported object version'),
    (_spec_with(num_instances='many'), 'malformed object'),
    (_spec_with(instance_uuids=5), 'malformed object'),
    (_spec_with(flavor={'vcpus': 1}), 'malformed object'),
], ids=['unknown-name', 'newer-version', 'bad-int', 'bad-list',
        'object-field-not-an-object'])
def test_undecodable_object_is_an_expected_invalid_request(wire, words):
    serializer = objects.SchedulerObjectSerializer()
    with pytest.raises(rpc_dispatcher.ExpectedException) as info:
        serializer.deserialize_entity(None, wire)
    wrapped = info.value.exc_info[1]
    assert isinstance(wrapped, exception.InvalidRequest)
    assert words in str(wrapped)


def test_context_round_trip_keeps_identity_and_roles():
    serializer = objects.SchedulerObjectSerializer()
    ctxt = sched_context.RequestContext(project_id='p1', user_id='u1',
                                        roles=['member'])
    rebuilt = serializer.deserialize_context(
        serializer.serialize_context(ctxt))
    assert isinstance(rebuilt, sched_context.RequestContext)
    assert (rebuilt.project_id, rebuilt.user_id, rebuilt.roles) == (
        'p1', 'u1', ['member'])
    assert not rebuilt.is_admin_caller


def test_missing_context_becomes_an_anonymous_one():
    serializer = objects.SchedulerObjectSerializer()
    # nothing but the send time, which orders casts
    assert list(serializer.serialize_context(None)) == ['sent_at']
    rebuilt = serializer.deserialize_context(None)
    assert rebuilt.user_id is None and not rebuilt.is_admin_caller


def test_malformed_context_is_an_expected_invalid_request():
    serializer = objects.SchedulerObjectSerializer()
    with pytest.raises(rpc_dispatcher.ExpectedException) as info:
        serializer.deserialize_context('not a dict')
    assert isinstance(info.value.exc_info[1], exception.InvalidRequest)


def test_a_send_time_utc_cannot_hold_is_an_invalid_request():
    serializer = objects.SchedulerObjectSerializer()
    with pytest.raises(rpc_dispatcher.ExpectedException) as info:
        serializer.deserialize_context(
            {'sent_at': '0001-01-01T00:00:00+01:00'})
    assert isinstance(info.value.exc_info[1], exception.InvalidRequest)
    assert 'out of range' in str(info.value.exc_info[1])


@pytest.mark.parametrize('ctxt, admin', [
    # a sender's is_admin flag grants nothing; only the admin role does
    (sched_context.RequestContext(is_admin=True), False),
    (sched_context.RequestContext(roles=['admin']), True),
    (sched_context.RequestContext(roles=['member', 'reader']), False),
    (sched_context.get_admin_context(), True),
])
def test_admin_caller(ctxt, admin):
    assert ctxt.is_admin_caller is admin


def test_get_returns_default_for_unset_fields():
    dest = objects.Destination(host='h1')
    assert dest.get('node', 'n-default') == 'n-default'
    assert dest.get('host') == 'h1'


@pytest.mark.parametrize('stamp', [
    '2026-11-26T21:16:18.686345', '2026-11-26T21:16:18',
    '2026-11-26T21:16:18.686345+02:00', '2026-11-26T21:16:18Z',
    '2026-11-26 21:16:18'])
def test_a_send_time_reads_as_the_general_parser_reads_it(stamp):
    # the serializer's own stamps take a shortcut; every stamp, the same
    ctxt = objects.SchedulerObjectSerializer().deserialize_context(
        {'sent_at': stamp})
    assert ctxt.sent_at == timeutils.normalize_time(
        timeutils.parse_isotime(stamp))
