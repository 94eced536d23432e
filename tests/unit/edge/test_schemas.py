"""The edge check per method and version: good and bad payloads, each
refusal naming the field (table-driven over ``scheduler.edge.schemas``)."""

import datetime
import types

import pytest
from oslo_utils import timeutils

from scheduler import exception
from scheduler import objects
from scheduler.edge import arguments
from scheduler.edge import schemas
from scheduler.edge import validation

LIMITS = types.SimpleNamespace(
    max_instances_per_request=10, max_list_length=50, max_string_length=300,
    max_nesting_depth=10, max_message_items=500, max_clock_skew=60)
U1 = '1a2b3c4d-0000-4000-8000-000000000001'
U2 = '1a2b3c4d-0000-4000-8000-000000000002'


def check(method, version='1.3', **args):
    """Run the whole edge check on ``args`` as a worker receives them."""
    serializer = objects.SchedulerObjectSerializer()
    edge = validation.EdgeCheck(LIMITS)
    raw = {k: serializer.serialize_entity(None, v) for k, v in args.items()}
    edge.check_message(method, version, raw)
    values = {k: serializer.deserialize_entity(None, v)
              for k, v in raw.items()}
    values = arguments.read(method, values)
    edge.check_arguments(method, version, values)
    return values


def _spec(num=1, uuids=None, group=None, groups=(), locality=(),
          hints=None, image=None, **flavor):
    flavor = dict({'vcpus': 1, 'memory_mb': 512}, **flavor)
    return objects.RequestSpec(
        num_instances=num, flavor=objects.Flavor(**flavor),
        instance_uuids=uuids, instance_group=group,
        scheduler_hints=hints or {}, image=image,
        resource_groups=[objects.ResourceGroup(**g) for g in groups],
        locality=[objects.LocalityRule(**r) for r in locality])


#: what a compute report without generic inventories must state
CAPACITY = {'vcpus': 2, 'memory_mb': 1024, 'local_gb': 10}
VOLUME = {'name': 'vol', 'kind': 'storage', 'resources': {'DISK_GB': 1}}
PORT = {'name': 'port', 'kind': 'network',
        'resources': {'NET_BW_EGR_KILOBIT_PER_SEC': 10}}

GOOD = [
    ('select_destinations', {'spec_obj': _spec()}),
    ('select_destinations', {'spec_obj': _spec(uuids=[U1]),
                             'instance_uuids': [U1, U2],
                             'return_alternates': True}),
    ('select_destinations', {'spec_obj': _spec(
        vcpus=0, memory_mb=0, extra_specs={'resources:CUSTOM_BM': '1'})}),
    ('select_destinations', {'spec_obj': _spec(
        groups=[VOLUME, PORT], locality=[{'groups': ['vol', 'port'],
                                          'scope': 'rack'}])}),
    ('select_destinations', {'spec_obj': _spec(
        group=objects.InstanceGroup(policy='anti-affinity', rules={
            'max_server_per_host': '2'}), hints={'same_host': [U1]})}),
    ('update_resource_stats', {'name': 'h1', 'stats': dict(CAPACITY)}),
    ('update_resource_stats', {'name': ['h1', 'n1'], 'stats': {
        'kind': 'storage', 'inventories': {'DISK_GB': {'total': 100}},
        'traits': ['CUSTOM_SSD'], 'locality': {'rack': 'r1'}}}),
    ('update_resource_stats', {'name': 'h' * 255, 'stats': dict(
        CAPACITY, cpu_allocation_ratio=10000.0)}),
    ('delete_allocations', {'consumer_uuid': U1}),
    ('sync_instance_info', {'host': 'h1', 'instance_uuids': [U1]}),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid=U1, metadata={'cpu_allocation_ratio': '2.0'})]}),
    ('update_aggregates', {'aggregates': objects.Aggregate(uuid=U1)}),
    ('delete_aggregate', {'aggregate': U1}),
    ('delete_aggregate', {'aggregate': objects.Aggregate(uuid=U1)}),
    ('update_instance_info', {'host': 'h1', 'instance_info': [
        objects.InstanceInfo(uuid=U1)]}),
    ('delete_instance_info', {'host': 'h1', 'instance_uuid': U1}),
    ('build_failed', {'name': 'h1'}),
    ('get_service_versions', {}),
]


@pytest.mark.parametrize('method, args', GOOD,
                         ids=['%s-%d' % (g[0], i) for i, g in enumerate(GOOD)])
def test_good_payloads_pass(method, args):
    check(method, **args)


def _bad_group(**changes):
    return _spec(groups=[dict(VOLUME, **changes)])


BAD = [
    # (method, args, field, words)
    ('select_destinations', {'spec_obj': _spec(num=11)},
     'spec_obj.num_instances',
     '11 is more than [limits] max_instances_per_request (10)'),
    ('select_destinations', {'spec_obj': _spec(num=0)},
     'spec_obj.num_instances', 'at least 1'),
    ('select_destinations', {'spec_obj': _spec(vcpus=0, memory_mb=0)},
     'spec_obj.flavor', 'requests no resources'),
    ('select_destinations', {'spec_obj': _spec(), 'instance_uuids': [
        U1, U1]}, 'instance_uuids[1]', 'duplicate instance uuid'),
    ('select_destinations', {'spec_obj': _spec(uuids=[U1, U1])},
     'spec_obj.instance_uuids[1]', 'duplicate'),
    ('select_destinations', {'spec_obj': _spec(), 'instance_uuids': ['x']},
     'instance_uuids[0]', "not a UUID: 'x'"),
    ('select_destinations', {'spec_obj': _spec(), 'colour': 1}, 'colour',
     'accepted: spec_obj, instance_uuids, return_alternates'),
    ('select_destinations', {'spec_obj': _spec(hints={
        'same_host': ['web-1']})}, 'spec_obj.scheduler_hints.same_host[0]',
     'not a UUID'),
    ('select_destinations', {'spec_obj': _spec(hints={
        'different_host': ['web-1']})},
     'spec_obj.scheduler_hints.different_host[0]', 'not a UUID'),
    ('select_destinations', {'spec_obj': _spec(
        group=objects.InstanceGroup(policy='spread'))},
     'spec_obj.instance_group.policy', 'soft-anti-affinity'),
    ('select_destinations', {'spec_obj': _spec(
        group=objects.InstanceGroup(policy='anti-affinity', rules={
            'max_server_per_host': '0'}))},
     'spec_obj.instance_group.rules.max_server_per_host',
     "a positive integer, got '0'"),
    ('select_destinations', {'spec_obj': _spec(
        extra_specs={'hw:cpu_policy': 'pinned'})},
     'flavor.extra_specs.hw:cpu_policy', "got 'pinned'"),
    ('select_destinations', {'spec_obj': _bad_group(
        required_traits=['ssd'])},
     'spec_obj.resource_groups[0].required_traits[0]', 'not a trait'),
    ('select_destinations', {'spec_obj': _bad_group(
        resources={'GOLD': 1})}, 'spec_obj.resource_groups[0].resources.GOLD',
     'not a resource class'),
    ('select_destinations', {'spec_obj': _bad_group(
        resources={'DISK_GB': 0})},
     'spec_obj.resource_groups[0].resources.DISK_GB', 'must be positive'),
    ('select_destinations', {'spec_obj': _bad_group(resources={})},
     'spec_obj.resource_groups[0].resources', 'must ask for resources'),
    ('select_destinations', {'spec_obj': _bad_group(any_traits=[[]])},
     'spec_obj.resource_groups[0].any_traits[0]', 'at least 1'),
    ('select_destinations', {'spec_obj': _bad_group(
        required_traits=['CUSTOM_A'], forbidden_traits=['CUSTOM_A'])},
     'spec_obj.resource_groups[0].forbidden_traits',
     'both required and forbidden'),
    ('select_destinations', {'spec_obj': _spec(groups=[VOLUME, VOLUME])},
     'spec_obj.resource_groups[1].name', 'unique'),
    ('select_destinations', {'spec_obj': _spec(groups=[
        {'name': 'a'}, {'name': 'b'}])}, 'spec_obj.resource_groups',
     'at most one group of kind compute'),
    ('select_destinations', {'spec_obj': _spec(groups=[VOLUME], locality=[
        {'groups': ['vol', 'port'], 'scope': 'rack'}])},
     'spec_obj.locality[0].groups', "no resource group 'port'"),
    ('select_destinations', {'spec_obj': _spec(groups=[VOLUME, PORT],
                                               locality=[{
        'groups': ['vol', 'port'], 'scope': 'Rack!'}])},
     'spec_obj.locality[0].scope', 'a locality key'),
    ('select_destinations', {'spec_obj': _spec(groups=[VOLUME, PORT],
                                               locality=[{
        'groups': ['vol', 'port'], 'scope': 'rack', 'policy': 'near'}])},
     'spec_obj.locality[0].policy', "expected one of same, different"),
    ('update_resource_stats', {'name': 'h1', 'stats': {'vcpus': 1.5}},
     'stats.vcpus', 'whole number, got 1.5'),
    ('update_resource_stats', {'name': 'h1', 'stats': dict(
        CAPACITY, updated_at=datetime.datetime(9999, 12, 31))},
     'stats.updated_at', 'in the future'),
    # a report must state its capacity: nothing left out reads as zero
    ('update_resource_stats', {'name': 'h1', 'stats': {}}, 'stats.vcpus',
     'a report states its capacity'),
    ('update_resource_stats', {'name': 'h1', 'stats': {
        'vcpus': 2, 'local_gb': 1}}, 'stats.memory_mb', 'missing'),
    ('update_resource_stats', {'name': 'h1', 'stats': {
        'kind': 'storage', 'inventories': {}}}, 'stats.vcpus', 'missing'),
    ('update_resource_stats', {'name': 'h1', 'stats': dict(
        CAPACITY, cpu_allocation_ratio=1e308)},
     'stats.cpu_allocation_ratio', 'must be at most 10000'),
    ('update_resource_stats', {'name': 'h1', 'stats': {'inventories': {
        'DISK_GB': {'total': 10, 'allocation_ratio': 1e308}}}},
     'stats.inventories.DISK_GB.allocation_ratio', 'must be at most'),
    ('update_resource_stats', {'name': 'h1', 'stats': dict(
        CAPACITY, vcpus=2 ** 62, cpu_allocation_ratio=4.0)},
     'stats.vcpus', 'more than a 64-bit capacity'),
    # names: at most 255 characters, no control character
    # (a report's name is read before its schema: tests/unit/test_manager)
    ('build_failed', {'name': 'h\nforged'}, 'name',
     'no control character'),
    ('build_failed', {'name': ['h1', 'n\x00']}, 'name', 'pair of names'),
    ('build_failed', {'name': 'h' * 256}, 'name', '255 characters'),
    ('update_resource_stats', {'name': 'h1', 'stats': dict(
        CAPACITY, traits=['CUSTOM_A\n'])}, 'stats.traits[0]',
     'is not a trait'),
    ('update_resource_stats', {'name': 'h1', 'stats': dict(
        CAPACITY, locality={'rack': 'r\u2028'})}, 'stats.locality.rack',
     'control character'),
    ('update_resource_stats', {'name': 'h1', 'stats': dict(
        CAPACITY, availability_zone='z' * 300)},
     'stats.availability_zone', '300 characters, more than 255'),
    ('update_resource_stats', {'name': ['h1'], 'stats': {}}, 'name',
     'a [host, node] pair'),
    ('delete_allocations', {'consumer_uuid': 'x'}, 'consumer_uuid',
     'not a UUID'),
    ('delete_allocations', {}, 'consumer_uuid', 'missing'),
    ('sync_instance_info', {'host': '', 'instance_uuids': [U1]}, 'host',
     'expected a host name'),
    ('sync_instance_info', {'host': 'h1', 'instance_uuids': U1},
     'instance_uuids', 'expected a list of UUIDs'),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid='not-a-uuid')]}, 'aggregates[0].uuid', 'not a UUID'),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid=U1, metadata={'cpu_allocation_ratio': 'nan'})]},
     'aggregates[0].metadata.cpu_allocation_ratio',
     'a number from 0 to 10000'),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid=U1, metadata={'ram_allocation_ratio': '-1'})]},
     'aggregates[0].metadata.ram_allocation_ratio',
     'a number from 0 to 10000'),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid=U1, metadata={'ram_allocation_ratio': '1e308'})]},
     'aggregates[0].metadata.ram_allocation_ratio',
     'a number from 0 to 10000'),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid=U1, name='agg\r\nforged')]}, 'aggregates[0].name',
     'control character'),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid=U1, hosts=['h1', 'x' * 256])]}, 'aggregates[0].hosts[1]',
     'more than 255'),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid=U1, metadata={'k\x00': 'v'})]},
     'aggregates[0].metadata.k\x00', 'control character'),
    ('delete_aggregate', {'aggregate': 'fast'}, 'aggregate',
     'neither an Aggregate nor its UUID'),
    ('update_instance_info', {'host': 'h1', 'instance_info': [
        objects.InstanceInfo(uuid=U1), {'uuid': U2}]}, 'instance_info[1]',
     'expected InstanceInfo'),
    ('delete_instance_info', {'host': 'h1', 'instance_uuid': 'vm'},
     'instance_uuid', "not a UUID: 'vm'"),
    ('build_failed', {'name': ['h1', 3]}, 'name', 'a [host, node] pair'),
    ('build_failed', {'name': 'h1\x1b[31m'}, 'name', 'control character'),
    ('sync_instance_info', {'host': 'h\x85', 'instance_uuids': [U1]},
     'host', 'no control character'),
    ('delete_instance_info', {'host': 'h' * 256, 'instance_uuid': U1},
     'host', 'expected a host name'),
    ('update_instance_info', {'host': 'h\n', 'instance_info': [
        objects.InstanceInfo(uuid=U1)]}, 'host', 'expected a host name'),
    ('get_service_versions', {'x': 1}, 'x', 'unknown argument'),
]


@pytest.mark.parametrize('method, args, field, words', BAD,
                         ids=['%s-%d' % (b[0], i) for i, b in enumerate(BAD)])
def test_bad_payloads_name_the_field(method, args, field, words):
    with pytest.raises(exception.InvalidField) as info:
        check(method, **args)
    assert info.value.kwargs['field'] == field
    assert words in str(info.value)


def test_a_report_within_the_clock_skew_passes():
    check('update_resource_stats', name='h1', stats=dict(
        CAPACITY, updated_at=timeutils.utcnow() + datetime.timedelta(
            seconds=30)))


def test_a_nova_request_spec_is_read_then_checked():
    from tests.unit.fixtures.nova import legacy_requests
    spec = dict(legacy_requests.REQUEST_SPEC)
    values = check('select_destinations', spec_obj=spec)
    assert isinstance(values['spec_obj'], objects.RequestSpec)


@pytest.mark.parametrize('method, version, introduced', [
    ('select_destinations', '1.3', '1.0'),
    ('delete_allocations', '1.1', '1.1'),
    ('update_aggregates', '1.3', '1.2'),
    ('get_service_versions', '1.3', '1.3'),
])
def test_a_version_is_checked_by_the_newest_schema_not_above_it(
        method, version, introduced):
    assert schemas.schema_for(method, version) is \
        schemas.versions(method)[introduced]


def test_every_method_of_the_endpoint_has_a_schema():
    from scheduler import manager
    served = {name for name in vars(manager.SchedulerManager)
              if not name.startswith('_')
              and name not in ('stop', 'target', 'serve')}
    assert served == set(schemas.METHODS)
