"""Property tests (hypothesis) per RPC method against a real worker.

One scheduler-server (two workers, RabbitMQ, SQLite) receives, for every
RPC method, generated arguments: JSON values of every kind (huge and
negative numbers, NaN, infinities, odd unicode, nested lists and dicts),
valid objects with one field replaced by such a value, unknown extra
arguments. The property: every call is answered with a result or an
expected scheduler exception (never a RemoteError, TypeError or
database error), and after all of it the worker is alive and its log
holds no traceback. The terminal summary gives, per method, how many
messages were sent and how each was answered.
"""

import collections
import copy
import time
import uuid
import zlib

import kombu
import oslo_messaging
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from scheduler import exception
from scheduler import objects
from tests.functional import db_state
from tests.functional import server as server_mod
from tests.functional import workload

EXAMPLES = 120
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
ANSWERS = collections.defaultdict(collections.Counter)

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
CTXT = workload.context()


def _primitives():
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
}


@st.composite
def arguments(draw, method):
    bases = _primitives()
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


@pytest.fixture(scope='module')
def fuzz_server(tmp_path_factory):
    from tests.functional import services
    services.require('rabbitmq')
    workdir = tmp_path_factory.mktemp('fuzz')
    server = server_mod.SchedulerServer(
        workdir, 'sqlite:///%s' % (workdir / 'scheduler.sqlite'), workers=2)
    server.db_sync()
    server.start().wait_ready()
    workload.push_hosts(server, workload.host_reports(5))
    client = server.client()
    yield server, server.raw_client(client).prepare(version='1.2',
                                                    timeout=30)
    server.close()


def _answer(raw, method, args):
    try:
        raw.call(CTXT, method, **args)
        return 'answered'
    except exception.SchedulerException as exc:
        return type(exc).__name__.replace('_Remote', '')
    except (TypeError, ValueError, OverflowError, RecursionError):
        # the client itself could not encode it: nothing was sent
        return 'not sendable'
    except oslo_messaging.MessagingException as exc:
        return 'FAULT %s' % type(exc).__name__
    except Exception as exc:
        return 'FAULT %s' % type(exc).__name__


@pytest.mark.parametrize('method', sorted(SIGNATURES))
def test_every_call_gets_a_clear_answer(fuzz_server, method, summary_line):
    server, raw = fuzz_server

    @SETTINGS
    @given(arguments(method))
    def check(args):
        answer = _answer(raw, method, args)
        ANSWERS[method][answer] += 1
        assert not answer.startswith('FAULT'), (answer, args)

    check()
    summary_line('fuzz %s: %d calls: %s' % (
        method, sum(ANSWERS[method].values()), dict(ANSWERS[method])))
    server.assert_alive()


def _nested(depth):
    value = ['x']
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize('args, field', [
    ({'instance_uuids': _nested(100)}, 'instance_uuids'),
    ({'instance_uuids': ['x'] * 100001}, 'instance_uuids'),
    ({'return_alternates': 'y' * 70000}, 'return_alternates'),
], ids=['deep', 'long-list', 'long-string'])
def test_limits_answer_with_the_field(fuzz_server, args, field):
    server, raw = fuzz_server
    with pytest.raises(exception.InvalidField) as info:
        raw.call(CTXT, 'select_destinations',
                 spec_obj=_primitives()['spec_obj'], **args)
    assert info.value.kwargs['field'].startswith(field)


def test_casts_leave_no_traceback(fuzz_server, summary_line):
    server, raw = fuzz_server
    sent = collections.Counter()

    @settings(SETTINGS, max_examples=3 * EXAMPLES)
    @given(st.sampled_from(sorted(SIGNATURES)).flatmap(
        lambda m: st.tuples(st.just(m), arguments(m))))
    def check(method_args):
        method, args = method_args
        try:
            raw.cast(CTXT, method, **args)
            sent[method] += 1
        except (TypeError, ValueError, OverflowError, RecursionError):
            pass

    check()
    time.sleep(3)        # let the workers take every cast
    server.assert_alive()
    summary_line('fuzz casts: %d sent: %s' % (sum(sent.values()),
                                               dict(sent)))
    log = server.log_text()
    assert 'Traceback' not in log, server.errors_in_log(limit=5)
    assert server.errors_in_log() == []


def test_undecodable_bodies_are_one_warning_each(fuzz_server):
    """Invalid UTF-8, non-JSON and a zip bomb (200 MB of zeros in about
    200 KB) sent straight to the topic: each is dropped with one warning
    line; the worker's memory is never spent on the bomb."""
    server, raw = fuzz_server
    bomb = zlib.compress(b'0' * (200 * 1024 * 1024), 9)
    bodies = [(b'\xff\xfe\xfd', {}), (b'{"not json', {}),
              (bomb, {'compression': 'application/x-gzip'})]
    before = server.count_in_log('Dropped a message that cannot be decoded')
    with kombu.Connection('amqp://guest:guest@127.0.0.1:5672//') as conn:
        producer = conn.Producer()
        for body, headers in bodies:
            producer.publish(body, exchange=kombu.Exchange(
                'scheduler', type='topic', durable=False),
                routing_key=server.topic, content_type='application/json',
                content_encoding='utf-8', headers=headers)
    db_state.wait_for(
        lambda: server.count_in_log(
            'Dropped a message that cannot be decoded') >= before + 3,
        20, 'three dropped messages in the log')
    assert 'Traceback' not in server.log_text()
    # still serving
    with pytest.raises(exception.InvalidField):
        raw.call(CTXT, 'select_destinations', spec_obj=None, colour=1)


REPORT = {'vcpus': 4, 'memory_mb': 4096, 'local_gb': 40}


@pytest.mark.parametrize('method, args, field', [
    ('update_resource_stats', {'name': 'fuzz-h1', 'stats': {}},
     'stats.vcpus'),
    ('update_resource_stats', {'name': 'fuzz-h1', 'stats': dict(
        REPORT, cpu_allocation_ratio=1e308)}, 'stats.cpu_allocation_ratio'),
    ('update_resource_stats', {'name': 'fuzz-h1\nforged', 'stats': REPORT},
     'name'),
    ('update_resource_stats', {'name': 'h' * 300, 'stats': REPORT},
     'name'),
    ('update_aggregates', {'aggregates': [objects.Aggregate(
        uuid=U1, hosts=['fuzz\x00h1'])]}, 'aggregates[0].hosts[0]'),
], ids=['empty-report', 'ratio-1e308', 'newline-name', 'long-name',
        'nul-in-aggregate-host'])
def test_edge_refusals_are_answers_without_traceback(fuzz_server, method,
                                                     args, field):
    """Issue 24, points 4 to 6: sent as calls, each refusal names the
    field; nothing is stored and the log holds no traceback."""
    server, raw = fuzz_server
    with pytest.raises(exception.InvalidField) as info:
        raw.call(CTXT, method, **args)
    assert info.value.kwargs['field'] == field
    assert 'Traceback' not in str(info.value)
    assert 'Traceback' not in server.log_text()
    assert not [p for p in db_state.read_state(server.engine).values()
                if p.host.startswith('fuzz-h')]


def test_envelope_refusals_leave_the_worker_serving(fuzz_server):
    """Issue 24, points 1 and 6: an endpoint attribute is no method (a
    cast of ``conf`` with an empty context left a worker answering
    NotInitializedError), a surrogate in the context and a huge value
    are refused in a line or two of log, without traceback."""
    from scheduler import context as sched_context
    server, raw = fuzz_server
    empty = sched_context.RequestContext(overwrite=False)
    for name in ('conf', 'notifier', 'host_cache', 'target', 'stop'):
        for _worker in range(2):
            raw.cast(empty, name)
    with pytest.raises(exception.InvalidField, match='no such method'):
        raw.call(CTXT, 'conf')
    surrogate = workload.context()
    surrogate.user_id = 'user-\ud800'
    with pytest.raises(exception.InvalidField, match='context.user'):
        raw.call(surrogate, 'update_resource_stats', name='fuzz-h2',
                 stats=REPORT)
    before = len(server.log_text())
    with pytest.raises(exception.InvalidField):
        raw.call(CTXT, 'build_failed', name='h1', **{'x' * 60000: 1})
    raw.cast(CTXT, 'build_failed', name='h1', **{'y' * 60000: 1})
    time.sleep(1)
    assert len(server.log_text()) - before < 4096
    # every worker serves on, and stored none of it
    for _ in range(4):
        assert raw.call(CTXT, 'get_service_versions')
    assert 'Traceback' not in server.log_text()
    assert not [p for p in db_state.read_state(server.engine).values()
                if p.host.startswith('fuzz-h')]
