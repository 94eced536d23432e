"""The schemas as the validator runs them on the raw message
(``scheduler.edge.schemas.wire``, ``errors``) and the edge's one pass:
what the old path needed a marker attribute or a second walk for."""

import datetime
import types

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.edge import arguments
from scheduler.edge import schemas
from scheduler.edge import validation
from scheduler.edge.schemas import errors
from scheduler.edge.schemas import wire

LIMITS = types.SimpleNamespace(
    max_instances_per_request=10, max_list_length=50, max_string_length=300,
    max_nesting_depth=10, max_message_items=500, max_clock_skew=60)
U1 = '1a2b3c4d-0000-4000-8000-000000000001'
SERIALIZER = objects.SchedulerObjectSerializer()
CAPACITY = {'vcpus': 2, 'memory_mb': 1024, 'local_gb': 10}


def _raw(**args):
    return {name: SERIALIZER.serialize_entity(None, value)
            for name, value in args.items()}


def _refusal(method, **args):
    with pytest.raises(exception.InvalidField) as info:
        validation.EdgeCheck(LIMITS).check_message(method, '1.3',
                                                   _raw(**args))
    return info.value.kwargs['field'], str(info.value)


def test_an_object_schema_applies_to_a_primitive_s_data():
    schema = wire.derive({'type': 'object', 'required': ['n'],
                          'properties': {'n': {'type': 'integer'}}}).schema
    assert schema['if'] == {'type': 'object',
                            'required': ['scheduler_object.data']}
    assert schema['then']['properties']['scheduler_object.data'][
        'required'] == ['n']


def test_string_keywords_are_formats_of_strings_and_value_keywords_rules():
    derived = wire.derive({'type': 'object', 'properties': {
        't': {'trait': True, 'name': True},
        'm': {'type': 'object', 'nameKeys': True}},
        'claimsSomething': True})
    data = derived.schema['then']['properties']['scheduler_object.data']
    assert data['properties']['t'] == {
        'type': 'string', 'format': 'trait', 'allOf': [{'format': 'name'}]}
    assert data['properties']['m']['then']['properties'][
        'scheduler_object.data']['propertyNames'] == {'format': 'name'}
    assert derived.rules == [((), 'claimsSomething', True)]


def test_a_value_keyword_in_a_branch_fails_at_start_up():
    with pytest.raises(ValueError, match='distinctUuids in a branch'):
        wire.derive({'anyOf': [{'distinctUuids': True}, {'type': 'null'}]})


def test_the_data_step_of_a_primitive_is_no_field():
    assert errors.field_name(['spec_obj', 'scheduler_object.data',
                              'resource_groups', 0, 'nova_object.data',
                              'name']) == 'spec_obj.resource_groups[0].name'
    assert errors.field_name([]) == 'args'


def test_fields_read_nested_primitives_as_their_fields():
    spec = wire.Fields(_raw(spec=objects.RequestSpec(
        flavor=objects.Flavor(vcpus=3, memory_mb=1)))['spec'][
            'scheduler_object.data'])
    assert spec.flavor.vcpus == 3
    assert spec['flavor'].get('memory_mb') == 1
    assert isinstance(spec.get('flavor'), dict)


def test_a_report_is_checked_as_sent_without_a_marker():
    """The schema reads the message: the fields the tracker left out are
    missing there, with no attribute on the read ComputeNode saying so."""
    field, text = _refusal('update_resource_stats', name='h1',
                           stats={'vcpus': 2, 'local_gb': 1})
    assert field == 'stats.memory_mb'
    assert 'states its capacity' in text
    node = objects.ComputeNode(host='h1', hypervisor_hostname='h1',
                               vcpus=2, local_gb=1)
    field, _ = _refusal('update_resource_stats', name='h1', stats=node)
    assert field == 'stats.memory_mb'
    read = arguments.report('h1', dict(CAPACITY))
    assert not [name for name in vars(read) if 'default' in name]


def test_a_plain_dict_for_an_object_is_refused_by_the_schema():
    field, text = _refusal('select_destinations', spec_obj={
        'flavor': {'vcpus': 1, 'memory_mb': 1}})
    assert field == 'spec_obj'
    assert 'expected RequestSpec, got dict' in text


def test_a_timestamp_as_text_or_as_a_datetime():
    ahead = datetime.datetime.utcnow() + datetime.timedelta(days=2)
    for stamp in (ahead, ahead.isoformat() + 'Z', ahead.isoformat()):
        field, text = _refusal('update_resource_stats', name='h1',
                               stats=dict(CAPACITY, updated_at=stamp))
        assert field == 'stats.updated_at'
        assert 'in the future' in text


def test_a_nova_request_spec_is_checked_once_it_is_read():
    from tests.unit.fixtures.nova import legacy_requests
    edge = validation.EdgeCheck(LIMITS)
    raw = {'spec_obj': dict(legacy_requests.REQUEST_SPEC),
           'instance_uuids': [U1]}
    assert edge.check_message('select_destinations', '1.3', raw) == \
        frozenset(['spec_obj'])
    read = arguments.read('select_destinations', raw)
    edge.check_arguments('select_destinations', '1.3', read, {'spec_obj'})
    read['spec_obj'].num_instances = 0
    with pytest.raises(exception.InvalidField, match='at least 1'):
        edge.check_arguments('select_destinations', '1.3', read,
                             {'spec_obj'})


def test_the_scheduler_s_own_messages_need_no_second_check():
    edge = validation.EdgeCheck(LIMITS)
    spec = objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=1))
    assert edge.check_message('select_destinations', '1.3', _raw(
        spec_obj=spec, instance_uuids=[U1])) == frozenset()
    assert edge.check_message('update_aggregates', '1.3', _raw(
        aggregates=objects.Aggregate(uuid=U1))) == frozenset()


def test_every_schema_is_built_when_the_check_is_built(monkeypatch):
    built = []
    real = validation._SchemaCheck

    def recording(schema, *rest):
        built.append(id(schema))
        return real(schema, *rest)
    monkeypatch.setattr(validation, '_SchemaCheck', recording)
    validation.EdgeCheck(LIMITS)
    assert set(built) == {id(schema) for method in schemas.METHODS
                          for schema in schemas.versions(method).values()}


def test_an_object_of_another_name_is_refused_naming_it():
    primitive = _raw(spec=objects.RequestSpec(flavor=objects.Flavor(
        vcpus=1, memory_mb=1)))['spec']
    primitive['scheduler_object.name'] = 'NoSuchObject'
    with pytest.raises(exception.InvalidField) as info:
        validation.EdgeCheck(LIMITS).check_message(
            'select_destinations', '1.3', {'spec_obj': primitive})
    assert info.value.kwargs['field'] == 'spec_obj'
    assert "expected RequestSpec, got 'NoSuchObject'" in str(info.value)
