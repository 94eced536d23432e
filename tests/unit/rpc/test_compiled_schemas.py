"""The compiled schemas (``scheduler.rpc.schemas.compiled``) answer as
jsonschema does: on every payload of ``test_schemas``' table, at every
version, on payloads hypothesis mutates around them, and on small schemas
of each keyword; a keyword the compiler does not know fails compilation;
``EdgeCheck`` trusts jsonschema when the two disagree."""

import copy
import datetime
import math

import hypothesis
import jsonschema
import pytest
from hypothesis import strategies as st
from oslo_utils import uuidutils

from scheduler import exception
from scheduler import objects
from scheduler.objects import base
from scheduler.rpc import arguments
from scheduler.rpc import schemas
from scheduler.rpc import validation
from scheduler.rpc.schemas import compiled
from scheduler.rpc.schemas import keywords
from tests.unit.rpc import test_schemas as table

LIMITS = table.LIMITS
U1, U2 = table.U1, table.U2
EDGE = validation.EdgeCheck(LIMITS)
#: predicates of values already viewed (no objects)
PLAIN = compiled.Compiler(keywords.build(LIMITS),
                          formats={'uuid': uuidutils.is_uuid_like})
VERSIONED = [(method, version) for method in schemas.METHODS
             for version in schemas.versions(method)]
RAISED = 'raised'


def _jsonschema(method, version, values):
    """'valid', 'invalid' or RAISED: jsonschema on the view (the
    reference ``EdgeCheck`` falls back to)."""
    try:
        error = next(EDGE._validator(method, version).iter_errors(
            validation.view(values)), None)
    except Exception:
        return RAISED
    return 'valid' if error is None else 'invalid'


def _predicate(predicate, value):
    try:
        return predicate(value)
    except Exception:
        return RAISED


def assert_agree(method, version, values):
    """The compiled predicates pass exactly what jsonschema passes: the
    one ``EdgeCheck`` runs (on the arguments as read) and the plain one
    (on their view). Returns jsonschema's answer."""
    expected = _jsonschema(method, version, values)
    schema = schemas.schema_for(method, version)
    raw = _predicate(EDGE._schema(method, version)[1], values)
    plain = _predicate(PLAIN.compile(schema), validation.view(values))
    for name, answer in (('compiled', raw), ('plain compiled', plain)):
        assert (answer is True) == (expected == 'valid'), (
            '%s %s: %s says %r, jsonschema %r, on %r' % (
                method, version, name, answer, expected,
                validation.view(values)))
    return expected


def _read(method, args):
    """``args`` as a worker reads them (serialized, deserialized, read);
    None if they cannot be read (refused before the schema)."""
    serializer = objects.SchedulerObjectSerializer()
    raw = {k: serializer.serialize_entity(None, v) for k, v in args.items()}
    values = {k: serializer.deserialize_entity(None, v)
              for k, v in raw.items()}
    try:
        return arguments.read(method, values)
    except exception.InvalidField:
        return None


PAYLOADS = [(method, args) for method, args in table.GOOD] + \
    [(bad[0], bad[1]) for bad in table.BAD]


def _nova_spec():
    from tests.unit.fixtures.nova import legacy_requests
    return dict(legacy_requests.REQUEST_SPEC)


#: the table's payloads that reach the schema (a few are refused while
#: they are read, before it: test_the_table_is_mostly_checked_by_the_schema)
CHECKED = [(i, method, args) for i, (method, args) in enumerate(PAYLOADS)
           if _read(method, args) is not None]


@pytest.mark.parametrize('method, args', [c[1:] for c in CHECKED], ids=[
    '%s-%d' % (c[1], c[0]) for c in CHECKED])
def test_the_table_agrees_at_every_version(method, args):
    values = _read(method, args)
    for version in schemas.versions(method):
        assert_agree(method, version, values)


def test_the_table_is_mostly_checked_by_the_schema():
    read = [_read(method, args) for method, args in PAYLOADS]
    assert sum(values is not None for values in read) >= len(PAYLOADS) - 3
    answers = [assert_agree(method, '1.3', values)
               for (method, _args), values in zip(PAYLOADS, read)
               if values is not None]
    assert answers.count('valid') >= len(table.GOOD)
    assert answers.count('invalid') >= 25


def test_a_nova_request_spec_agrees():
    values = _read('select_destinations', {'spec_obj': _nova_spec()})
    assert assert_agree('select_destinations', '1.3', values) == 'valid'


# -- hypothesis: payloads mutated around the table's ------------------------

def _property_names(schema, names):
    if isinstance(schema, dict):
        names.update(schema.get('properties', ()))
        names.update(schema.get('required', ()))
        for value in schema.values():
            _property_names(value, names)
    elif isinstance(schema, list):
        for value in schema:
            _property_names(value, names)
    return names


NAMES = sorted(_property_names([s for m in schemas.METHODS for s in
                                schemas.versions(m).values()], set()))
UUIDS = [U1, U2, U1.upper(), U1.replace('-', ''), '{%s}' % U1,
         'urn:uuid:' + U1, U1[:-1], U1 + '0', U1.replace('1', 'g', 1)]
WORDS = ['', ' ', 'h1', 'n1', 'x', 'CUSTOM_A', 'CUSTOM_BM', 'ssd',
         'HW_CPU_X86_AVX', 'DISK_GB', 'VCPU', 'MEMORY_MB', 'GOLD', 'compute',
         'storage', 'network', 'Network', 'rack', 'row', 'host', 'Rack!',
         'availability_zone', 'affinity', 'anti-affinity', 'soft-affinity',
         'soft-anti-affinity', 'spread', 'same', 'different', 'near', '1',
         '0', '2', ' 3 ', '+4', '007', '2.0', '-1', 'nan', 'inf', '1e3',
         'dedicated', 'shared', 'mixed', 'pinned', 'hw:cpu_policy',
         'hw:cpu_thread_policy', 'resources:VCPU', 'resources:CUSTOM_BM',
         'trait:CUSTOM_A', 'vol', 'port', 'max_server_per_host']
KEYS = st.sampled_from(NAMES + WORDS)
NUMBERS = st.one_of(
    st.integers(-3, 12), st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, 2.5, -0.5, 2 ** 63, -2 ** 63, 1e308]))
DATES = st.datetimes(min_value=datetime.datetime(2000, 1, 1),
                     max_value=datetime.datetime(9999, 1, 1),
                     timezones=st.none() | st.just(datetime.timezone.utc)
                     | st.just(datetime.timezone(datetime.timedelta(
                         hours=-5))))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS,
                    st.sampled_from(UUIDS + WORDS), st.text(max_size=6),
                    DATES, st.just(datetime.datetime.utcnow()))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3),
    st.tuples(inner), st.tuples(inner, inner)), max_leaves=6)


def _read_all(payloads):
    out = []
    for method, args in payloads:
        values = _read(method, args)
        if values is not None:
            out.append((method, values))
    return out


BASES = _read_all(PAYLOADS + [
    ('select_destinations', {'spec_obj': _nova_spec()}),
    ('select_destinations', {'spec_obj': table._spec(
        extra_specs={'hw:cpu_policy': 'dedicated'})}),
    ('select_destinations', {'spec_obj': table._spec(
        groups=[dict(table.VOLUME, required_traits=['CUSTOM_A'],
                     any_traits=[['CUSTOM_B', 'HW_CPU_X86_AVX']])])}),
    ('update_resource_stats', {'name': ['h1', 'n1'], 'stats': {
        'vcpus': 8, 'cpu_allocation_ratio': 2.0,
        'updated_at': datetime.datetime(2020, 1, 1)}}),
])


def _is_object(value):
    return isinstance(value, base.SchedulerObject)


def _places(value, out):
    """(container, key) of every value inside ``value``."""
    if _is_object(value):
        pairs = validation._set_fields(value)
    elif isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list):
        pairs = list(enumerate(value))
    else:
        return out
    for key, item in pairs:
        out.append((value, key))
        _places(item, out)
    return out


def _get(container, key):
    if _is_object(container):
        return getattr(container, key)
    return container[key]


def _set(container, key, value):
    if _is_object(container):
        # past the field's coercion: the check sees whatever is set
        container.__dict__['_obj_' + key] = value
    else:   # past ovo's coerced lists and dicts too
        type(container).__mro__[-2].__setitem__(container, key, value)


def _delete(container, key):
    if _is_object(container):
        container.__dict__.pop('_obj_' + key, None)
    else:
        type(container).__mro__[-2].__delitem__(container, key)


def _nearby(value, data):
    """A value close to ``value``: a number off by a little, a string
    edited, a container emptied."""
    if isinstance(value, bool):
        return data.draw(st.sampled_from([not value, int(value), None]))
    if isinstance(value, (int, float)):
        return data.draw(st.sampled_from([
            value + 1, value - 1, -value, 0, -1, float(value), value + 0.5,
            str(value), math.nan, math.inf, True, False, 10 ** 20]))
    if isinstance(value, str):
        return data.draw(st.sampled_from([
            '', value.upper(), value.lower(), value[:-1], value + 'x',
            ' ' + value, value.replace('-', ''), [value], value.encode()]))
    if isinstance(value, (list, dict)) or _is_object(value):
        return data.draw(st.sampled_from([[], {}, (), None, 'x']))
    return data.draw(SCALARS)


def _mutate(values, data):
    """One change somewhere in ``values`` (in place)."""
    places = _places(values, [])
    container, key = data.draw(st.sampled_from(places))
    current = _get(container, key)
    how = data.draw(st.sampled_from([
        'replace', 'nearby', 'nearby', 'delete', 'wrap', 'add']))
    if how == 'replace':
        _set(container, key, data.draw(VALUES))
    elif how == 'nearby':
        _set(container, key, _nearby(current, data))
    elif how == 'delete':
        _delete(container, key)
    elif how == 'wrap':
        _set(container, key, data.draw(st.sampled_from([
            [current], (current,), {'x': current}, [current, current],
            {data.draw(KEYS): current}])))
    elif _is_object(container):
        unset = sorted(name for name in container.fields
                       if not container.obj_attr_is_set(name))
        if unset:
            _set(container, data.draw(st.sampled_from(unset)),
                 data.draw(VALUES))
    elif isinstance(container, dict):
        dict.__setitem__(container, data.draw(KEYS), data.draw(VALUES))
    else:
        list.insert(container, data.draw(st.integers(0, len(container))),
                    data.draw(VALUES))


@hypothesis.settings(max_examples=600, deadline=None, derandomize=True,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(data=st.data())
def test_mutated_payloads_agree(data):
    method, values = data.draw(st.sampled_from(BASES))
    values = copy.deepcopy(values)
    for _ in range(data.draw(st.integers(1, 3))):
        if _places(values, []):
            _mutate(values, data)
    version = data.draw(st.sampled_from(list(schemas.versions(method))))
    hypothesis.event(assert_agree(method, version, values))


@hypothesis.settings(max_examples=300, deadline=None, derandomize=True,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(method_version=st.sampled_from(VERSIONED),
                  values=st.dictionaries(KEYS, VALUES, max_size=4))
def test_made_up_arguments_agree(method_version, values):
    assert_agree(*method_version, values)


# -- each keyword, on its own ------------------------------------------------

_VALIDATOR = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, keywords.build(LIMITS),
    type_checker=validation._TYPES)
SAMPLES = [None, True, False, 0, 1, -1, 2, 2.0, 2.5, -0.0, math.nan,
           math.inf, -math.inf, 2 ** 70, '', 'a', 'abc', ' 7 ', U1, 'x' + U1,
           [], [1], [1, 2], [1, 2, 3], (), (1,), ('a', 'b'), {}, {'a': 1},
           {'a': 'x', 'b': 2}, {'b': None}, validation.View(a=2),
           datetime.datetime(2000, 1, 1), datetime.datetime(9000, 1, 1),
           object()]
SMALL = [
    {'type': name} for name in sorted(compiled.TYPES)] + [
    {'type': ['integer', 'null']}, {'type': ['array', 'object']},
    {'type': []},
    {'minimum': 0}, {'maximum': 1}, {'exclusiveMinimum': 0},
    {'exclusiveMaximum': 2}, {'minimum': 0, 'exclusiveMaximum': 2.5},
    {'minLength': 1}, {'maxLength': 2}, {'pattern': r'^\s*[1-9]\s*$'},
    {'pattern': 'b'}, {'minItems': 1}, {'maxItems': 1},
    {'minItems': 2, 'maxItems': 2, 'items': {'type': 'integer'}},
    {'items': False}, {'items': True}, {'items': {'minimum': 2}},
    {'enum': ['a', 'abc']}, {'enum': [1, None, True]}, {'enum': [2.0]},
    {'const': 1}, {'const': 'a'}, {'const': False},
    {'format': 'uuid'}, {'type': 'string', 'format': 'uuid'},
    {'required': ['a']}, {'required': []},
    {'properties': {'a': {'type': 'integer'}}},
    {'properties': {'a': {'type': 'integer'}}, 'additionalProperties':
     False},
    {'additionalProperties': {'type': 'string'}},
    {'properties': {'b': {'type': 'null'}}, 'additionalProperties':
     {'type': 'string'}},
    {'anyOf': [{'type': 'string'}, {'type': 'array', 'minItems': 2}]},
    {'oneOf': [{'type': 'integer'}, {'minimum': 1}]},
    {'allOf': [{'type': 'number'}, {'maximum': 1}]},
    {'not': {'type': 'null'}},
    True, False, {}, {'x-reason': 'a reason', 'description': 'text'},
    {'trait': True}, {'providerKind': True}, {'ratioText': True},
    {'notInFuture': True}, {'distinctUuids': True},
    {'limitMaximum': 'max_instances_per_request'},
    {'resourceClassKeys': True, 'type': 'object'},
]


@pytest.mark.parametrize('schema', SMALL, ids=[repr(s) for s in SMALL])
def test_each_keyword_agrees_with_jsonschema(schema):
    predicate = PLAIN.compile(schema)
    validator = _VALIDATOR(schema, format_checker=validation._FORMATS)
    for value in SAMPLES:
        try:
            expected = validator.is_valid(value)
        except TypeError:
            continue    # jsonschema cannot compare it either
        assert predicate(value) is expected, (schema, value)


def test_the_stand_in_validator_descends():
    def odd(validator, sub, instance, schema):
        if validator.is_type(instance, 'array'):
            for item in instance:
                yield from validator.descend(item, sub)
    compiler = compiled.Compiler({'each': odd})
    check = compiler.compile({'each': {'type': 'integer', 'minimum': 1}})
    assert check([1, 2]) and check('x')
    assert not check([1, 0]) and not check([True])


@pytest.mark.parametrize('schema', [
    {'uniqueItems': True},
    {'type': 'object', 'properties': {'a': {'maxProperties': 1}}},
    {'items': {'prefixItems': [{}]}},
    {'$ref': '#/$defs/a', '$defs': {'a': {}}},
    {'patternProperties': {'^a': {}}},
    {'anyOf': [{'type': 'string'}, {'contains': {}}]},
    {'format': 'date-time'},
    {'type': 'float'},
    {'trait': True},    # a project keyword this compiler was not given
    {'enum': [[1]]},
    {'minLength': -1},
    {'items': [{}]},
])
def test_an_unknown_keyword_fails_compilation(schema):
    with pytest.raises(compiled.UnsupportedSchema):
        compiled.Compiler({}, formats={'uuid': uuidutils.is_uuid_like}
                          ).compile(schema)


# -- EdgeCheck: the predicate first, jsonschema for the error ----------------

def _edge_with(method, predicate):
    edge = validation.EdgeCheck(LIMITS)
    schema, _predicate, accepted, raw = edge._schema(method, '1.3')
    edge._chosen[(method, '1.3')] = (schema, predicate, accepted, raw)
    return edge


def test_a_valid_message_never_reaches_jsonschema(monkeypatch):
    edge = validation.EdgeCheck(LIMITS)
    monkeypatch.setattr(edge, '_validator', None)
    edge.check_arguments('delete_allocations', '1.3', {'consumer_uuid': U1})
    edge.check_arguments('select_destinations', '1.3', _read(
        'select_destinations', table.GOOD[1][1]))


@pytest.mark.parametrize('predicate', [
    lambda args: False, lambda args: 1 / 0])
def test_jsonschema_decides_when_they_disagree(monkeypatch, predicate):
    logged = []
    monkeypatch.setattr(validation.LOG, 'error',
                        lambda *args: logged.append(args))
    edge = _edge_with('delete_allocations', predicate)
    edge.check_arguments('delete_allocations', '1.3', {'consumer_uuid': U1})
    assert len(logged) == 1
    assert logged[0][1]['method'] == 'delete_allocations'
    with pytest.raises(exception.InvalidField) as info:
        edge.check_arguments('delete_allocations', '1.3',
                             {'consumer_uuid': 'x'})
    assert info.value.kwargs == {'field': 'consumer_uuid',
                                 'reason': "not a UUID: 'x'"}
    assert len(logged) == 1


def test_every_schema_is_compiled_when_the_check_is_built(monkeypatch):
    edge = validation.EdgeCheck(LIMITS)
    monkeypatch.setattr(edge._compiler, '_build', None)
    for method, version in VERSIONED:
        assert edge._schema(method, version)[1] is edge._compiler.compile(
            schemas.schema_for(method, version))


def test_a_schema_the_compiler_cannot_check_stops_the_worker(monkeypatch):
    monkeypatch.setitem(schemas.module('build_failed').SCHEMAS, '1.2', {
        'type': 'object', 'properties': {}, 'uniqueItems': True})
    with pytest.raises(compiled.UnsupportedSchema):
        validation.EdgeCheck(LIMITS)
