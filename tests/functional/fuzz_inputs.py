"""Generated RPC messages for the fuzz tests, and how an answer is named.

``arguments(method)`` is a hypothesis strategy for the keyword arguments
of one RPC method: each argument missing, a JSON value of any kind (huge
and negative numbers, NaN, infinities, odd unicode, nested lists and
dicts), or a valid object with one field replaced by such a value, and
now and then an unknown extra argument. ``SIGNATURES`` names every RPC
method and its arguments; ``calls()`` draws a method and its arguments.
``answer(raw, ctxt, method, args)`` makes the call and names what came
back: ``'answered'``, a scheduler exception's class, ``'not sendable'``
(the client could not encode it) or ``'FAULT ...'``, which no input may
cause::

    @given(fuzz_inputs.arguments('build_failed'))
    def check(args):
        assert not fuzz_inputs.answer(raw, ctxt, 'build_failed',
                                      args).startswith('FAULT')
"""

import copy
import uuid

from hypothesis import strategies as st

from scheduler import exception
from scheduler import objects
from tests.functional import workload

scalars = (st.none() | st.booleans()
           | st.integers(min_value=-2 ** 80, max_value=2 ** 80)
           | st.floats(allow_nan=True, allow_infinity=True)
           | st.text(max_size=12)
           | st.sampled_from(['\ud800', '\x00', 'é' * 3, str(uuid.uuid4()),
                              '9999-12-31T23:59:59', 'nan', '1.5']))
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)

U1 = '1a2b3c4d-0000-4000-8000-000000000001'

SIGNATURES = {
    'select_destinations': ('spec_obj', 'instance_uuids',
                            'return_alternates'),
    'update_resource_stats': ('name', 'stats'),
    'delete_allocations': ('consumer_uuid',),
    'sync_instance_info': ('host', 'instance_uuids'),
    'update_aggregates': ('aggregates',),
    'delete_aggregate': ('aggregate',),
    'update_instance_info': ('host', 'instance_info'),
    'delete_instance_info': ('host', 'instance_uuid'),
    'build_failed': ('name',),
    'get_service_versions': (),
}
# errors of the client itself: nothing was sent
NOT_SENDABLE = (TypeError, ValueError, OverflowError, RecursionError)


def primitives():
    """A valid primitive of each object argument, to mutate."""
    spec = workload.object_spec({'vcpus': 1, 'memory_mb': 64, 'root_gb': 1})
    return {
        'spec_obj': spec.obj_to_primitive(),
        'aggregates': [objects.Aggregate(
            uuid=U1, name='a', hosts=['h1'],
            metadata={'cpu_allocation_ratio': '2.0'}).obj_to_primitive()],
        'aggregate': objects.Aggregate(uuid=U1).obj_to_primitive(),
        'instance_info': [objects.InstanceInfo(
            uuid=U1, project_id='p').obj_to_primitive()],
    }


def _paths(value, path=()):
    """Every path into a primitive (object data, dict keys, list items)."""
    yield path
    if isinstance(value, dict):
        data = value.get('scheduler_object.data', value)
        key = ('scheduler_object.data',) if data is not value else ()
        for name, child in data.items():
            yield from _paths(child, path + key + (name,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, path + (index,))


def _replace(value, path, new):
    if not path:
        return new
    value = copy.deepcopy(value)
    target = value
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return value


@st.composite
def mutated(draw, base):
    paths = list(_paths(base))
    path = draw(st.sampled_from(paths))
    return _replace(base, path, draw(values))


@st.composite
def arguments(draw, method):
    bases = primitives()
    args = {}
    for name in SIGNATURES[method]:
        if not draw(st.booleans()):
            continue          # a missing argument
        if name in bases and draw(st.booleans()):
            args[name] = draw(mutated(bases[name]))
        else:
            args[name] = draw(values)
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(min_size=1, max_size=6))] = draw(values)
    return args


def calls():
    """(method, arguments) of any RPC method."""
    return st.sampled_from(sorted(SIGNATURES)).flatmap(
        lambda m: st.tuples(st.just(m), arguments(m)))


def answer(raw, ctxt, method, args):
    try:
        raw.call(ctxt, method, **args)
        return 'answered'
    except exception.SchedulerException as exc:
        return type(exc).__name__.replace('_Remote', '')
    except NOT_SENDABLE:
        return 'not sendable'
    except Exception as exc:
        return 'FAULT %s' % type(exc).__name__
