"""ComputeNode.from_stats: a tracker's update_resource_stats payload.

Good input becomes a ComputeNode with every field set (defaults filled
in); bad input raises ``InvalidField`` (a ``ValueError``) naming the field.
"""

import datetime

import pytest

from scheduler import exception
from scheduler import objects

NODE_UUID = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5f'

STATS = {
    'uuid': NODE_UUID, 'vcpus': 32, 'memory_mb': 131072, 'local_gb': 2000,
    'vcpus_used': 4, 'memory_mb_used': 8192, 'local_gb_used': 80,
    'running_vms': 2, 'hypervisor_type': 'QEMU',
    'hypervisor_version': 8002000, 'host_ip': '192.0.2.10',
    'supported_instances': [['x86_64', 'kvm', 'hvm']],
    'stats': {'num_instances': '2', 'io_workload': '0'},
    'cpu_allocation_ratio': 16.0, 'reserved_host_memory_mb': 512,
    'availability_zone': 'az1', 'disabled': False,
}


def test_dict_payload_sets_reported_fields():
    node = objects.ComputeNode.from_stats('h1', 'n1', dict(STATS))
    assert (node.host, node.hypervisor_hostname, node.nodename) == (
        'h1', 'n1', 'n1')
    assert (node.vcpus, node.memory_mb, node.local_gb) == (32, 131072, 2000)
    assert node.vcpus_used == 4
    assert node.cpu_allocation_ratio == 16.0
    assert str(node.host_ip) == '192.0.2.10'
    assert node.supported_instances == [['x86_64', 'kvm', 'hvm']]
    assert node.availability_zone == 'az1'


def test_unreported_fields_get_their_defaults():
    node = objects.ComputeNode.from_stats('h1', None, {'vcpus': 2})
    assert node.nodename == 'h1'
    assert node.memory_mb == 0 and node.reserved_host_cpus == 0
    assert node.disabled is False
    assert node.stats == {} and node.supported_instances == []
    assert node.ram_allocation_ratio is None
    assert node.updated_at is None
    # every field is set, so nothing raises "Cannot load" later
    assert [f for f in node.fields if not node.obj_attr_is_set(f)] == []


def test_matching_host_in_payload_is_accepted():
    node = objects.ComputeNode.from_stats('h1', 'n1',
                                          dict(STATS, host='h1'))
    assert node.host == 'h1'


def test_hypervisor_hostname_in_payload_does_not_rename_the_node():
    node = objects.ComputeNode.from_stats(
        'h1', 'n1', dict(STATS, hypervisor_hostname='other'))
    assert node.nodename == 'n1'


def test_compute_node_payload_is_accepted():
    sent = objects.ComputeNode(host='h1', vcpus=8, memory_mb=1024,
                               updated_at=datetime.datetime(
                                   2026, 3, 1, tzinfo=datetime.timezone.utc))
    node = objects.ComputeNode.from_stats('h1', 'n1', sent)
    assert (node.vcpus, node.memory_mb) == (8, 1024)
    assert node.updated_at == sent.updated_at
    assert node.nodename == 'n1'


@pytest.mark.parametrize('host, stats, field', [
    ('h1', dict(STATS, bogus=1), 'stats.bogus'),
    ('h1', dict(STATS, vcpus='many'), 'stats.vcpus'),
    ('h1', dict(STATS, vcpus=-1), 'stats.vcpus'),
    ('h1', dict(STATS, host_ip='not-an-ip'), 'stats.host_ip'),
    ('h1', dict(STATS, supported_instances='x86_64'),
     'stats.supported_instances'),
    ('h1', dict(STATS, updated_at='yesterday'), 'stats.updated_at'),
    ('h1', dict(STATS, host='h2'), 'stats.host'),
    ('h1', [('vcpus', 1)], 'stats'),
    ('h1', None, 'stats'),
    ('', dict(STATS), 'name'),
    (None, dict(STATS), 'name'),
    (['h1'], dict(STATS), 'name'),
], ids=lambda value: value if isinstance(value, str) else None)
def test_bad_payload_names_the_field(host, stats, field):
    with pytest.raises(ValueError) as info:
        objects.ComputeNode.from_stats(host, 'n1', stats)
    assert isinstance(info.value, exception.InvalidField)
    assert info.value.kwargs['field'] == field
    assert field in str(info.value)


def test_updated_at_keeps_its_microseconds_on_the_wire():
    stamp = datetime.datetime(2026, 3, 1, 12, 0, 0, 123456,
                              tzinfo=datetime.timezone.utc)
    node = objects.ComputeNode.from_stats(
        'h1', 'n1', {'vcpus': 1, 'memory_mb': 1, 'local_gb': 1,
                     'updated_at': stamp})
    serializer = objects.SchedulerObjectSerializer()
    wire = serializer.serialize_entity(None, node)
    assert wire['scheduler_object.data']['updated_at'] == \
        '2026-03-01T12:00:00.123456Z'
    assert serializer.deserialize_entity(None, wire).updated_at == stamp


def _received(node, **changes):
    """``node`` as the RPC edge's serializer rebuilds it from a message
    (``changes`` replace the primitive's own keys)."""
    serializer = objects.SchedulerObjectSerializer()
    primitive = serializer.serialize_entity(None, node)
    primitive.update(('scheduler_object.' + k, v)
                     for k, v in changes.items())
    return serializer.deserialize_entity(None, primitive)


def _fields(node):
    return {f: getattr(node, f) for f in node.fields
            if node.obj_attr_is_set(f)}


@pytest.mark.parametrize('version', ['1.0', '1.1'])
def test_an_adopted_report_is_the_copy_completed_in_place(version):
    sent = objects.ComputeNode.from_stats('h9', None, dict(
        STATS, traits=['CUSTOM_B', 'CUSTOM_A']))
    sent.obj_reset_changes(['disabled', 'kind'])
    copied = objects.ComputeNode.from_stats(
        'h1', 'n1', _received(sent, version=version))
    received = _received(sent, version=version)
    adopted = objects.ComputeNode.from_stats('h1', 'n1', received,
                                             adopt=True)
    assert adopted is received
    assert _fields(adopted) == _fields(copied)
    assert (adopted.host, adopted.nodename) == ('h1', 'n1')
    assert adopted.VERSION == copied.VERSION == objects.ComputeNode.VERSION
    assert adopted.traits == ['CUSTOM_A', 'CUSTOM_B']    # checked


def test_an_unset_field_named_changed_gets_its_default_adopted_or_copied():
    """A primitive whose ``changes`` lists a field its ``data`` lacks:
    that field gets its default, whether the report is completed in place
    or copied (reading it used to raise NotImplementedError: an internal
    error, not an answer)."""
    sent = objects.ComputeNode(host='h1', vcpus=8)
    primitive = objects.SchedulerObjectSerializer().serialize_entity(
        None, sent)
    for adopt in (False, True):
        node = objects.ComputeNode.from_stats('h1', None, _received(
            sent, changes=primitive['scheduler_object.changes']
            + ['memory_mb']), adopt=adopt)
        assert (node.vcpus, node.memory_mb) == (8, 0)


def test_an_adopted_report_is_checked_as_a_copy():
    sent = objects.ComputeNode(host='h1', vcpus=8, inventories={
        'CUSTOM_X': {'total': 4}}, used={'VGPU': 1})
    for adopt in (False, True):
        with pytest.raises(exception.InvalidField) as info:
            objects.ComputeNode.from_stats('h1', None, _received(sent),
                                           adopt=adopt)
        assert info.value.kwargs['field'] == 'stats.used.VGPU'


def test_a_report_not_adopted_leaves_the_callers_object_alone():
    sent = objects.ComputeNode(host='h1', vcpus=8)
    node = objects.ComputeNode.from_stats('h2', None, sent)
    assert node is not sent and sent.host == 'h1'
    assert not sent.obj_attr_is_set('memory_mb')
