"""The ``[limits]`` in the schemas (``scheduler.edge.schemas.bounds``):
every node bounded, and the edge's one pass never looser than the walk
of the limits it stands in for (``walk.check_structure``)."""

import types

import jsonschema_rs
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings

from scheduler import exception
from scheduler import objects
from scheduler.edge import schemas
from scheduler.edge import validation
from scheduler.edge.schemas import bounds
from scheduler.edge.schemas import wire
from scheduler.transport import wire as wire_format
from tests.functional import fuzz_inputs

LIMITS = types.SimpleNamespace(
    max_instances_per_request=10, max_list_length=8, max_string_length=40,
    max_nesting_depth=6, max_message_items=60, max_clock_skew=60)
SERIALIZER = objects.SchedulerObjectSerializer()
U1 = '1a2b3c4d-0000-4000-8000-000000000001'


def test_every_node_is_bounded():
    """Each level holds every limit; only the last holds no container,
    and each container's items and values are the next level down."""
    found = bounds.definitions(LIMITS)
    assert sorted(found) == sorted('free%d' % levels for levels in range(
        LIMITS.max_nesting_depth + 1))
    for levels in range(LIMITS.max_nesting_depth + 1):
        node = found['free%d' % levels]
        assert node['maxLength'] == LIMITS.max_string_length
        assert (node['minimum'], node['maximum']) == (-2 ** 63, 2 ** 63 - 1)
        containers = {'array', 'object'} & set(node['type'])
        assert containers == (set() if levels == 0 else {'array', 'object'})
        if not levels:
            continue
        inner = {'$ref': '#/$defs/free%d' % (levels - 1)}
        assert node['items'] == node['additionalProperties'] == inner
        assert node['maxItems'] == node['maxProperties'] == \
            LIMITS.max_list_length
        assert node['propertyNames'] == {
            'maxLength': LIMITS.max_string_length}
        for sub in node['properties'].values():
            assert sub.get('$ref') == inner['$ref'] or sub == {
                'type': 'string', 'maxLength': LIMITS.max_string_length}


@pytest.mark.parametrize('method', sorted(schemas.METHODS))
def test_every_argument_of_every_method_is_bounded(method):
    """... and the validator takes the bounded schemas (they are built
    when a message first needs them, not at start-up)."""
    for schema in schemas.versions(method).values():
        held = bounds.bounded(wire.derive(schema).schema, LIMITS,
                              schemas.raw_objects(method))
        jsonschema_rs.Draft202012Validator(
            held, formats=validation._FORMATS, validate_formats=True)
        root = '#/$defs/free%d' % LIMITS.max_nesting_depth
        limits_part = held['allOf'][1]
        assert limits_part['additionalProperties'] == {'$ref': root}
        for sub in limits_part['properties'].values():
            assert sub['$ref'] == root


def test_one_coercion_rule_per_field_name():
    fields = bounds.all_fields()
    assert fields['vcpus'] == bounds.field_schema(
        objects.Flavor.fields['vcpus']._type)
    assert fields['disabled'] == {'type': ['boolean', 'null']}


def _outcome(edge, method, args, text_length):
    try:
        return edge.check_message(method, '1.3', args, text_length)
    except exception.InvalidField as exc:
        return exc.kwargs['field'], str(exc)


def _text_length(args):
    """As the transport states it (``wire.text_length``)."""
    return wire_format.text_length(wire_format.pack({'args': args}))


@pytest.mark.parametrize('args, field, words', [
    ({'instance_uuids': [float('nan')]}, 'instance_uuids[0]',
     'not a finite number'),
    ({'instance_uuids': [2 ** 70]}, 'instance_uuids[0]',
     'integer out of range'),
    ({'instance_uuids': ['x' * 41]}, 'instance_uuids[0]',
     'max_string_length (40)'),
    ({'instance_uuids': [U1] * 9}, 'instance_uuids', 'max_list_length (8)'),
    ({'instance_uuids': [[[[[[['x']]]]]]]},
     'instance_uuids[0][0][0][0][0][0]',
     'max_nesting_depth (6)'),
    ({'spec_obj': {'scheduler_object.name': 'RequestSpec',
                   'scheduler_object.data': {'image': {
                       'hw': {'\ud800': 1}}}}},
     'spec_obj.image.hw', 'not valid unicode'),
    ({'spec_obj': {'scheduler_object.name': 'RequestSpec',
                   'scheduler_object.data': {'image': {
                       'scheduler_object.name': 'ImageMeta',
                       'scheduler_object.data': {'min_ram': 1.5}}}}},
     'spec_obj.image.min_ram', 'whole number, got 1.5'),
    ({'spec_obj': {'scheduler_object.name': 'RequestSpec',
                   'scheduler_object.data': {'scheduler_hints': {
                       'x': float('inf')}}}},
     'spec_obj.scheduler_hints.x', 'not a finite number'),
    ({'spec_obj': {'scheduler_object.name': 'RequestSpec',
                   'scheduler_object.data': {'scheduler_hints': {'x': {
                       'scheduler_object.name': 'y' * 41,
                       'scheduler_object.data': {}}}}}},
     'spec_obj.scheduler_hints.x.scheduler_object.name',
     'max_string_length (40)'),
])
def test_what_the_walk_refuses_the_one_pass_refuses(args, field, words):
    """Sent with a known text length (the one pass tried first), each is
    refused as the walk refuses it, naming the field."""
    edge = validation.EdgeCheck(LIMITS)
    found = _outcome(edge, 'select_destinations', args, 10)
    assert found[0] == field and words in found[1], found


@pytest.mark.parametrize('stats, field, words', [
    ({'vcpus': '1e3'}, 'stats.vcpus', "whole number, got '1e3'"),
    ({'vcpus': True}, 'stats.vcpus', 'whole number, got True'),
    ({'disabled': 'false'}, 'stats.disabled', 'must be true or false'),
    ({'cpu_allocation_ratio': 'nan'}, 'stats.cpu_allocation_ratio',
     "not a finite number: 'nan'"),
    ({'used': {'X': 2.5}}, 'stats.used.X', 'whole number, got 2.5'),
])
def test_a_report_s_coerced_fields_are_refused_by_the_one_pass(stats, field,
                                                               words):
    edge = validation.EdgeCheck(LIMITS)
    stats = dict({'vcpus': 1, 'memory_mb': 1, 'local_gb': 1}, **stats)
    found = _outcome(edge, 'update_resource_stats',
                     {'name': 'h1', 'stats': stats}, 10)
    assert found[0] == field and words in found[1], found


def test_a_long_text_is_walked_for_its_number_of_values():
    edge = validation.EdgeCheck(LIMITS)
    args = {'name': 'h1', 'stats': {'vcpus': 1, 'memory_mb': 1,
                                    'local_gb': 1, 'stats': {
                                        str(i): [1] * 8 for i in range(8)}}}
    assert edge.check_message('update_resource_stats', '1.3', args,
                              10) == frozenset()   # as a short text says
    found = _outcome(edge, 'update_resource_stats', args,
                     _text_length(args))
    assert found == ('stats', found[1]) and 'max_message_items (60)' in \
        found[1]


@pytest.mark.parametrize('method', sorted(schemas.METHODS))
def test_the_one_pass_answers_as_the_walk_and_the_schema(method):
    """Differential, over the fuzz tests' messages: the edge with the
    text's length (the one pass first) and without it (the walk, then
    the schema) pass and refuse the same messages, with the same
    answer."""
    edge = validation.EdgeCheck(types.SimpleNamespace(
        **dict(vars(LIMITS), max_message_items=10 ** 6)))

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(fuzz_inputs.arguments(method))
    def check(args):
        raw = {name: SERIALIZER.serialize_entity(None, value)
               for name, value in args.items()}
        assert _outcome(edge, method, raw, _text_length(raw)) == \
            _outcome(edge, method, raw, None)

    check()


@pytest.mark.parametrize('ctxt, field, words', [
    ({'extra': {'\ud800': 1}}, 'context.extra', 'not valid unicode'),
    ({'extra': {'x': float('nan')}}, 'context.extra.x', 'not a finite'),
    ({'extra': ['x' * 41]}, 'context.extra[0]', 'max_string_length'),
])
def test_a_context_is_held_to_the_limits_in_one_pass(ctxt, field, words):
    edge = validation.EdgeCheck(LIMITS)
    edge.check_envelope('build_failed', '1.3', {'user_id': 'u1'}, 10)
    with pytest.raises(exception.InvalidField) as info:
        edge.check_envelope('build_failed', '1.3', ctxt, 10)
    assert info.value.kwargs['field'] == field
    assert words in str(info.value)


def test_a_nested_lone_surrogate_is_refused_as_the_transport_states_it():
    """jsonschema-rs passes a lone surrogate in a nested string value:
    the transport states no length for such a text, so it is walked."""
    edge = validation.EdgeCheck(LIMITS)
    args = {'spec_obj': {'scheduler_object.name': 'RequestSpec',
                         'scheduler_object.data': {'scheduler_hints': {
                             'x': ['\ud800']}}}}
    assert _text_length(args) is None
    found = _outcome(edge, 'select_destinations', args, _text_length(args))
    assert found[0] == 'spec_obj.scheduler_hints.x[0]', found
    assert 'not valid unicode' in found[1]
