"""The generic step of the edge check: each refusal names the field and
the limit (the schemas are tested in test_schemas)."""

import datetime
import types

import pytest
from oslo_utils import timeutils

from scheduler import exception
from scheduler.db import send_order
from scheduler.edge import validation
from scheduler.edge import walk

LIMITS = types.SimpleNamespace(
    max_instances_per_request=10, max_list_length=5, max_string_length=30,
    max_nesting_depth=4, max_message_items=50, max_clock_skew=60)


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
        walk.check_structure(value, 'arg', LIMITS)
    assert info.value.kwargs['field'] == field
    assert words in str(info.value)


def test_a_deep_message_is_refused_without_recursion():
    deep = []
    for _ in range(100000):
        deep = [deep]
    with pytest.raises(exception.InvalidField, match='max_nesting_depth'):
        walk.check_structure(deep, 'arg', LIMITS)


def test_a_plain_dict_of_object_fields_gets_the_whole_number_check():
    with pytest.raises(exception.InvalidField,
                       match='stats.vcpus.*whole number, got 1.5'):
        walk.check_structure({'vcpus': 1.5}, 'stats', LIMITS,
                                   'ComputeNode')


@pytest.mark.parametrize('stats, field, words', [
    ({'vcpus': '1e3'}, 'stats.vcpus', "whole number, got '1e3'"),
    ({'vcpus': '9' * 20}, 'stats.vcpus', 'integer out of range'),
    ({'vcpus': 1e30}, 'stats.vcpus', 'integer out of range'),
    ({'vcpus': True}, 'stats.vcpus', 'whole number, got True'),
    ({'cpu_allocation_ratio': 'nan'}, 'stats.cpu_allocation_ratio',
     "not a finite number: 'nan'"),
    ({'cpu_allocation_ratio': 'fast'}, 'stats.cpu_allocation_ratio',
     "must be a number, got 'fast'"),
    ({'disabled': 'false'}, 'stats.disabled',
     "must be true or false, got 'false'"),
    ({'disabled': 0}, 'stats.disabled', 'must be true or false, got 0'),
    ({'used': {'CUSTOM_X': 2.9}}, 'stats.used.CUSTOM_X',
     'whole number, got 2.9'),
    ({'used': {'CUSTOM_X': -0.5}}, 'stats.used.CUSTOM_X',
     'whole number, got -0.5'),
    ({'inventories': {'DISK_GB': {'total': 'nan'}}},
     'stats.inventories.DISK_GB.total', "not a finite number: 'nan'"),
])
def test_values_coercion_would_change_are_refused(stats, field, words):
    """oslo.versionedobjects would truncate, parse or (``bool('false')``)
    invert them: refused at the edge, naming the field."""
    with pytest.raises(exception.InvalidField) as info:
        walk.check_structure(stats, 'stats', LIMITS, 'ComputeNode')
    assert info.value.kwargs['field'] == field
    assert words in str(info.value)


def test_an_object_whose_name_is_not_a_string_is_refused():
    primitive = _flavor_primitive(vcpus=1)
    primitive['scheduler_object.name'] = ['Flavor']
    with pytest.raises(exception.InvalidField) as info:
        walk.check_structure({'spec': primitive}, 'arg', LIMITS)
    assert info.value.kwargs['field'] == 'arg.spec.scheduler_object.name'


def test_values_coercion_keeps_pass():
    for stats in ({'vcpus': '8', 'memory_mb': 8.0, 'disabled': False},
                  {'cpu_allocation_ratio': '1.5', 'ram_allocation_ratio': 2},
                  {'used': {'X': 2}, 'inventories': {
                      'DISK_GB': {'total': 10, 'allocation_ratio': 1}}}):
        walk.check_structure(stats, 'stats', LIMITS, 'ComputeNode')


def test_whole_values_pass():
    walk.check_structure(
        {'a': [1, 2.0, 'ok', None, True], 'b': _flavor_primitive(vcpus=2.0)},
        'arg', LIMITS)


def test_send_times_ahead_are_ordered_as_the_workers_now():
    now = timeutils.utcnow()
    ahead = types.SimpleNamespace(
        sent_at=now + datetime.timedelta(seconds=290))
    past = types.SimpleNamespace(sent_at=now - datetime.timedelta(seconds=1))
    # the edge passes the caller's stamp on; the database layer clamps it
    assert validation.order_stamp(ahead) == ahead.sent_at
    assert validation.order_stamp(object()) is None
    assert send_order.clamp(validation.order_stamp(ahead), now) == now
    assert send_order.clamp(validation.order_stamp(past), now) == \
        past.sent_at
    assert send_order.clamp(validation.order_stamp(object()), now) == now
