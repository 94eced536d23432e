"""RequestSpec.from_primitives: nova's legacy dict pair in, RequestSpec out.

Bad input raises ``InvalidField``, a ``ValueError`` whose message names the
offending field by its path in the legacy dicts.
"""

import copy

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.model import resource_classes as rcs

from .. import fakes

UUID1 = 'a0f5e2a8-9a6c-4b2f-8d1e-3c2b1a0f9e8d'
UUID2 = 'b0f5e2a8-9a6c-4b2f-8d1e-3c2b1a0f9e8d'
GROUP_UUID = 'c0f5e2a8-9a6c-4b2f-8d1e-3c2b1a0f9e8d'

# What nova's conductor sent with select_destinations before RequestSpec
# objects existed (nova.scheduler.utils.build_request_spec + the
# filter_properties it built alongside).
LEGACY_REQUEST_SPEC = {
    'instance_type': {
        'flavorid': '42', 'name': 'm1.small', 'vcpus': 2,
        'memory_mb': 2048, 'root_gb': 20, 'ephemeral_gb': 5, 'swap': 512,
        'extra_specs': {'hw:cpu_policy': 'dedicated'},
    },
    'instance_properties': {
        'project_id': 'p1', 'user_id': 'u1', 'availability_zone': 'az1',
        'uuid': UUID1, 'memory_mb': 2048, 'vcpus': 2, 'root_gb': 20,
        'display_name': 'web-1', 'launch_index': 0, 'os_type': 'linux',
    },
    'image': {
        'id': 'img-1', 'name': 'cirros', 'min_ram': 64, 'min_disk': 1,
        'status': 'active', 'container_format': 'bare',
        'properties': {'hw_disk_bus': 'virtio', 'hw_numa_nodes': 2,
                       'os_distro': None},
    },
    'num_instances': 2,
    'instance_uuids': [UUID1, UUID2],
    'security_group': ['default'],
    'block_device_mapping': [],
}

LEGACY_FILTER_PROPERTIES = {
    'scheduler_hints': {'group': GROUP_UUID, 'same_host': [UUID2],
                        'build_near_host_ip': '192.0.2.1', 'cidr': 24},
    'group_policies': ['anti-affinity'],
    'group_hosts': ['h9'],
    'group_members': [UUID2],
    'group_uuid': GROUP_UUID,
    'group_name': 'web',
    'retry': {'num_attempts': 2, 'hosts': [['h1', 'n1'], ['h4', 'n4']]},
    'force_hosts': ['h2'],
    'force_nodes': ['n2'],
    'ignore_hosts': ['h3'],
    'requested_destination': {'host': 'h2', 'node': 'n2'},
    'limits': {}, 'pci_requests': [], 'config_options': {},
}


@pytest.fixture
def spec():
    return objects.RequestSpec.from_primitives(
        copy.deepcopy(LEGACY_REQUEST_SPEC),
        copy.deepcopy(LEGACY_FILTER_PROPERTIES))


def test_flavor_comes_from_instance_type(spec):
    flavor = spec.flavor
    assert (flavor.flavorid, flavor.name, flavor.vcpus, flavor.memory_mb,
            flavor.root_gb, flavor.ephemeral_gb, flavor.swap) == (
        '42', 'm1.small', 2, 2048, 20, 5, 512)
    assert flavor.extra_specs == {'hw:cpu_policy': 'dedicated'}
    # swap is MiB and rounds up to a whole GiB of disk
    assert rcs.flavor_resources(flavor) == {
        rcs.VCPU: 2, rcs.MEMORY_MB: 2048, rcs.DISK_GB: 26}


def test_instance_properties_give_zone_owner_and_count(spec):
    assert spec.availability_zone == 'az1'
    assert (spec.project_id, spec.user_id) == ('p1', 'u1')
    assert spec.num_instances == 2
    assert spec.instance_uuids == [UUID1, UUID2]


def test_image_keeps_known_fields_and_stringifies_properties(spec):
    image = spec.image
    assert (image.id, image.name, image.min_ram, image.min_disk) == (
        'img-1', 'cirros', 64, 1)
    assert image.properties == {'hw_disk_bus': 'virtio',
                                'hw_numa_nodes': '2', 'os_distro': None}


def test_scalar_hints_become_one_element_lists(spec):
    assert spec.scheduler_hints == {
        'group': [GROUP_UUID], 'same_host': [UUID2],
        'build_near_host_ip': ['192.0.2.1'], 'cidr': ['24']}


def test_group_policy_hosts_and_members(spec):
    group = spec.instance_group
    assert (group.uuid, group.name, group.policy) == (
        GROUP_UUID, 'web', 'anti-affinity')
    assert group.hosts == ['h9']
    assert group.members == [UUID2]


def test_host_constraints(spec):
    assert spec.force_hosts == ['h2']
    assert spec.force_nodes == ['n2']
    assert spec.ignore_hosts == ['h3']
    assert (spec.requested_destination.host,
            spec.requested_destination.node) == ('h2', 'n2')
    assert spec.retry.num_attempts == 2
    assert spec.retry.hosts == [['h1', 'n1'], ['h4', 'n4']]


def test_translated_spec_survives_the_wire(spec):
    serializer = objects.SchedulerObjectSerializer()
    rebuilt = serializer.deserialize_entity(
        None, serializer.serialize_entity(None, spec))
    assert fakes.fields_of(rebuilt) == fakes.fields_of(spec)


def test_minimal_request_gets_defaults():
    spec = objects.RequestSpec.from_primitives(
        {'instance_type': {'vcpus': 1, 'memory_mb': 512}})
    assert spec.num_instances == 1
    assert spec.instance_group is None
    assert spec.retry is None
    assert spec.force_hosts is None
    assert spec.scheduler_hints == {}
    assert spec.instance_uuids is None
    assert rcs.flavor_resources(spec.flavor) == {rcs.VCPU: 1,
                                                 rcs.MEMORY_MB: 512}


def test_very_old_callers_send_sizes_on_the_instance():
    spec = objects.RequestSpec.from_primitives({'instance_properties': {
        'vcpus': 4, 'memory_mb': 8192, 'root_gb': 40, 'uuid': UUID1}})
    assert (spec.flavor.vcpus, spec.flavor.memory_mb,
            spec.flavor.root_gb) == (4, 8192, 40)
    assert spec.instance_uuids == [UUID1]


def test_filter_properties_override_instance_properties():
    spec = objects.RequestSpec.from_primitives(
        {'instance_type': {'vcpus': 1, 'memory_mb': 512},
         'instance_properties': {'availability_zone': 'az1'}},
        {'availability_zone': 'az2', 'project_id': 'p2'})
    assert spec.availability_zone == 'az2'
    assert spec.project_id == 'p2'


FLAVOR = {'vcpus': 1, 'memory_mb': 512}


def _spec(**extra):
    return dict({'instance_type': dict(FLAVOR)}, **extra)


BAD_INPUT = [
    ('x', {}, 'request_spec'),
    (_spec(), 'x', 'filter_properties'),
    (_spec(bogus=1), {}, 'request_spec.bogus'),
    (_spec(), {'bogus': 1}, 'filter_properties.bogus'),
    ({'instance_type': {'vcpus': 'many', 'memory_mb': 1}}, {},
     'request_spec.instance_type.vcpus'),
    ({'instance_type': {'vcpus': -1, 'memory_mb': 1}}, {},
     'request_spec.instance_type.vcpus'),
    ({'instance_type': {'vcpus': 1}}, {},
     'request_spec.instance_type.memory_mb'),
    ({'instance_type': dict(FLAVOR, color='red')}, {},
     'request_spec.instance_type.color'),
    ({'instance_type': 'm1.small'}, {}, 'request_spec.instance_type'),
    ({'instance_properties': {'memory_mb': 512}}, {},
     'request_spec.instance_properties.vcpus'),
    ({}, {}, 'request_spec.instance_properties.vcpus'),
    (_spec(instance_properties='x'), {}, 'request_spec.instance_properties'),
    (_spec(instance_properties={'bogus': 1}), {},
     'request_spec.instance_properties.bogus'),
    (_spec(instance_uuids=['not-a-uuid']), {},
     'request_spec.instance_uuids[0]'),
    (_spec(instance_uuids=[UUID1, 'nope']), {},
     'request_spec.instance_uuids[1]'),
    (_spec(num_instances=0), {}, 'request_spec.num_instances'),
    (_spec(num_instances='two'), {}, 'request_spec.num_instances'),
    (_spec(image='cirros'), {}, 'request_spec.image'),
    (_spec(image={'min_ram': -1}), {}, 'request_spec.image.min_ram'),
    (_spec(), {'group_policies': ['bogus']},
     'filter_properties.group_policies'),
    (_spec(), {'group_policies': ['affinity', 'anti-affinity']},
     'filter_properties.group_policies'),
    (_spec(), {'scheduler_hints': 'x'}, 'filter_properties.scheduler_hints'),
    (_spec(), {'retry': {'hosts': 'h1'}}, 'filter_properties.retry.hosts'),
    (_spec(), {'retry': 'h1'}, 'filter_properties.retry'),
    (_spec(), {'requested_destination': 'h1'},
     'filter_properties.requested_destination'),
    (_spec(), {'requested_destination': {'node': 'n1'}},
     'filter_properties.requested_destination.host'),
    (_spec(), {'force_hosts': 'h1'}, 'force_hosts'),
]


@pytest.mark.parametrize('request_spec, filter_properties, field', BAD_INPUT,
                         ids=[case[2] for case in BAD_INPUT])
def test_bad_input_names_the_field(request_spec, filter_properties, field):
    with pytest.raises(ValueError) as info:
        objects.RequestSpec.from_primitives(request_spec, filter_properties)
    assert isinstance(info.value, exception.InvalidRequest)
    assert info.value.kwargs['field'].endswith(field)
    assert 'field %s:' % info.value.kwargs['field'] in str(info.value)
