"""What a message may hold: each refusal names the field and the limit."""

import datetime
import types

import pytest
from oslo_utils import timeutils

from scheduler import exception
from scheduler import objects
from scheduler.rpc import validation

LIMITS = types.SimpleNamespace(
    max_instances_per_request=10, max_list_length=5, max_string_length=30,
    max_nesting_depth=4, max_message_items=50, max_clock_skew=60)
U1 = '1a2b3c4d-0000-4000-8000-000000000001'


def _flavor_primitive(**data):
    return {'scheduler_object.name': 'Flavor',
            'scheduler_object.namespace': 'scheduler_object',
            'scheduler_object.version': '1.0',
            'scheduler_object.data': data}


@pytest.mark.parametrize('value, field, words', [
    ([[[[['x']]]]], 'arg[0][0][0][0]', 'max_nesting_depth (4)'),
    (list(range(6)), 'arg', '6 items, more than [limits] max_list_length'),
    ('x' * 31, 'arg', 'max_string_length (30)'),
    ({'a': float('nan')}, 'arg.a', 'not a finite number: nan'),
    ([float('inf')], 'arg[0]', 'not a finite number: inf'),
    ({'n': 2 ** 70}, 'arg.n', 'integer out of range'),
    (['\ud800'], 'arg[0]', 'not valid unicode'),
    ({1: 'x'}, 'arg', 'dict keys must be strings'),
    (_flavor_primitive(vcpus=1.5, memory_mb=1), 'arg.vcpus',
     'must be a whole number, got 1.5'),
    ([[[1] * 5] * 5] * 2, 'arg', 'max_message_items (50)'),
])
def test_structure_refusals_name_the_field(value, field, words):
    with pytest.raises(exception.InvalidField) as info:
        validation.check_structure(value, 'arg', LIMITS)
    assert info.value.kwargs['field'] == field
    assert words in str(info.value)


def test_a_deep_message_is_refused_without_recursion():
    deep = []
    for _ in range(100000):
        deep = [deep]
    with pytest.raises(exception.InvalidField, match='max_nesting_depth'):
        validation.check_structure(deep, 'arg', LIMITS)


def test_whole_values_pass():
    validation.check_structure(
        {'a': [1, 2.0, 'ok', None, True], 'b': _flavor_primitive(vcpus=2.0)},
        'arg', LIMITS)


def _spec(num=1, uuids=None, **flavor):
    flavor = dict({'vcpus': 1, 'memory_mb': 512}, **flavor)
    spec = objects.RequestSpec(num_instances=num, flavor=objects.Flavor(
        **flavor), instance_uuids=uuids)
    return spec.obj_complete('spec_obj')


@pytest.mark.parametrize('spec, uuids, field, words', [
    (_spec(num=11), None, 'spec_obj.num_instances',
     '11 is more than [limits] max_instances_per_request (10)'),
    (_spec(num=0), None, 'spec_obj.num_instances', 'at least 1'),
    (_spec(vcpus=0, memory_mb=0), None, 'spec_obj.flavor',
     'requests no resources'),
    (_spec(), [U1, U1], 'instance_uuids[1]', 'duplicate instance uuid'),
    (_spec(uuids=[U1, U1]), None, 'spec_obj.instance_uuids[1]',
     'duplicate'),
])
def test_request_refusals(spec, uuids, field, words):
    with pytest.raises(exception.InvalidField) as info:
        validation.check_request(spec, uuids, LIMITS)
    assert info.value.kwargs['field'] == field
    assert words in str(info.value)


def test_a_baremetal_flavor_with_resource_overrides_passes():
    validation.check_request(
        _spec(vcpus=0, memory_mb=0,
              extra_specs={'resources:CUSTOM_BAREMETAL': '1'}), None, LIMITS)


def test_a_report_from_the_future_is_refused():
    now = timeutils.utcnow()
    node = objects.ComputeNode.from_stats('h1', 'h1', {
        'updated_at': datetime.datetime(9999, 12, 31)})
    with pytest.raises(exception.InvalidField,
                       match='stats.updated_at.*in the future'):
        validation.check_report(node, LIMITS, now)
    node.updated_at = now + datetime.timedelta(seconds=30)
    validation.check_report(node, LIMITS, now)   # within the skew


def test_fractional_stats_are_refused():
    with pytest.raises(exception.InvalidField,
                       match='stats.vcpus.*whole number, got 1.5'):
        validation.check_stats({'vcpus': 1.5}, objects.ComputeNode)


@pytest.mark.parametrize('agg, field', [
    (objects.Aggregate(uuid='not-a-uuid'), 'aggregates[0].uuid'),
    (objects.Aggregate(uuid=U1, metadata={'cpu_allocation_ratio': 'nan'}),
     'aggregates[0].metadata.cpu_allocation_ratio'),
    (objects.Aggregate(uuid=U1, metadata={'ram_allocation_ratio': '-1'}),
     'aggregates[0].metadata.ram_allocation_ratio'),
])
def test_aggregate_refusals(agg, field):
    with pytest.raises(exception.InvalidField) as info:
        validation.check_aggregate(agg, 'aggregates[0]')
    assert info.value.kwargs['field'] == field


def test_send_times_from_far_ahead_are_clamped_to_now():
    now = timeutils.utcnow()
    ahead = types.SimpleNamespace(
        sent_at=now + datetime.timedelta(days=365))
    near = types.SimpleNamespace(sent_at=now + datetime.timedelta(seconds=1))
    assert validation.order_stamp(ahead, LIMITS, now) == now
    assert validation.order_stamp(near, LIMITS, now) == near.sent_at
    assert validation.order_stamp(object(), LIMITS, now) == now
