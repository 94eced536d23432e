"""Property tests (hypothesis) per RPC method against a real worker.

One scheduler-server (two workers, RabbitMQ, SQLite) receives, for every
RPC method, generated arguments: JSON values of every kind (huge and
negative numbers, NaN, infinities, odd unicode, nested lists and dicts),
valid objects with one field replaced by such a value, unknown extra
arguments. The property: every call is answered with a result or an
expected scheduler exception (never a RemoteError, TypeError or
database error), and after all of it the worker is alive and its log
holds no traceback. The terminal summary gives, per method, how many
messages were sent and how each was answered. The generators are
``tests.functional.fuzz_inputs``.

``test_long_fuzz`` sends ``SCHEDULER_LONG_FUZZ`` calls and as many casts
(100 in the suite, 2,000 with ``tox -e fuzz``) against two workers on
PostgreSQL; it prints the answers by class, tracebacks, worker deaths,
log bytes per message, the largest log line and the workers' RSS before
and after, which may grow at most ``RSS_GROWTH_BOUND``.
"""

import collections
import os
import zlib

import kombu
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings

from scheduler import exception
from scheduler import objects
from tests.functional import db_state
from tests.functional import fuzz_inputs
from tests.functional import server as server_mod
from tests.functional import shared_broker
from tests.functional import workload

EXAMPLES = 120
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
ANSWERS = collections.defaultdict(collections.Counter)
SIGNATURES = fuzz_inputs.SIGNATURES
U1 = fuzz_inputs.U1
CTXT = workload.context()
# of the module's server: a larger body is cheap to send
MAX_MESSAGE_BYTES = 2 * 1024 * 1024
# calls and casts of the fuzz over every method: a short run in the suite,
# 2,000 of each with tox -e fuzz
LONG_FUZZ = int(os.environ.get('SCHEDULER_LONG_FUZZ', '100'))
# a worker's RSS may grow this much over the long fuzz
RSS_GROWTH_BOUND = 30 * 1024 * 1024


@pytest.fixture(scope='module')
def fuzz_server(tmp_path_factory):
    from tests.functional import services
    services.require('rabbitmq')
    workdir = tmp_path_factory.mktemp('fuzz')
    server = server_mod.SchedulerServer(
        workdir, 'sqlite:///%s' % (workdir / 'scheduler.sqlite'), workers=2,
        options={'limits': {'max_message_bytes': MAX_MESSAGE_BYTES}})
    server.db_sync()
    server.start().wait_ready()
    workload.push_hosts(server, workload.host_reports(5))
    client = server.client()
    yield server, server.raw_client(client).prepare(version='1.2',
                                                    timeout=30)
    server.close()


@pytest.mark.parametrize('method', sorted(SIGNATURES))
def test_every_call_gets_a_clear_answer(fuzz_server, method, summary_line):
    server, raw = fuzz_server

    @SETTINGS
    @given(fuzz_inputs.arguments(method))
    def check(args):
        answer = fuzz_inputs.answer(raw, CTXT, method, args)
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
                 spec_obj=fuzz_inputs.primitives()['spec_obj'], **args)
    assert info.value.kwargs['field'].startswith(field)


def test_casts_leave_no_traceback(fuzz_server, summary_line):
    server, raw = fuzz_server
    sent = collections.Counter()

    @settings(SETTINGS, max_examples=3 * EXAMPLES)
    @given(fuzz_inputs.calls())
    def check(method_args):
        method, args = method_args
        try:
            raw.cast(CTXT, method, **args)
            sent[method] += 1
        except fuzz_inputs.NOT_SENDABLE:
            pass

    check()
    db_state.wait_for(lambda: shared_broker.drained(server.topic), 120,
                      'every cast handled')
    server.assert_alive()
    summary_line('fuzz casts: %d sent: %s' % (sum(sent.values()),
                                               dict(sent)))
    log = server.log_text()
    assert 'Traceback' not in log, server.errors_in_log(limit=5)
    assert server.errors_in_log() == []


def test_undecodable_bodies_are_one_warning_each(fuzz_server):
    """Invalid UTF-8, non-JSON, a zip bomb (200 MB of zeros in about
    200 KB) and a body larger than max_message_bytes sent straight to the
    topic: each is dropped with one warning line; the worker's memory is
    never spent on the bomb, nor on decoding the large body."""
    server, raw = fuzz_server
    bomb = zlib.compress(b'0' * (200 * 1024 * 1024), 9)
    large = b'[' + b'0,' * MAX_MESSAGE_BYTES + b'0]'
    bodies = [(b'\xff\xfe\xfd', {}), (b'{"not json', {}),
              (bomb, {'compression': 'application/x-gzip'}), (large, {})]
    before = server.count_in_log('Dropped a message that cannot be decoded')
    with kombu.Connection(shared_broker.amqp_url()) as conn:
        producer = conn.Producer()
        for body, headers in bodies:
            producer.publish(body, exchange=kombu.Exchange(
                'scheduler', type='topic', durable=False),
                routing_key=server.topic, content_type='application/json',
                content_encoding='utf-8', headers=headers)
    db_state.wait_for(
        lambda: server.count_in_log(
            'Dropped a message that cannot be decoded') >= before + 4,
        20, 'four dropped messages in the log')
    assert 'Traceback' not in server.log_text()
    # the large body was refused for its size, before it was decoded
    assert server.count_in_log('a body of %d bytes is larger than '
                               '[limits] max_message_bytes' % len(large))
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
    db_state.wait_for(lambda: shared_broker.drained(server.topic), 30,
                      'the cast handled')
    assert len(server.log_text()) - before < 4096
    # every worker serves on, and stored none of it
    for _ in range(4):
        assert raw.call(CTXT, 'get_service_versions')
    assert 'Traceback' not in server.log_text()
    assert not [p for p in db_state.read_state(server.engine).values()
                if p.host.startswith('fuzz-h')]


def _worker_rss(server):
    """{pid: resident bytes} of the server's worker processes."""
    pids = server.worker_pids()
    rss = {}
    for pid in pids:
        with open('/proc/%s/status' % pid) as status:
            for line in status:
                if line.startswith('VmRSS:'):
                    rss[int(pid)] = int(line.split()[1]) * 1024
    return rss


def _fuzz(raw, count, answers, cast):
    """``count`` generated messages over every method; returns how many
    were sent (the client refuses to encode some)."""
    sent = collections.Counter()

    @settings(SETTINGS, max_examples=count)
    @given(fuzz_inputs.calls())
    def check(method_args):
        method, args = method_args
        if not cast:
            answers[fuzz_inputs.answer(raw, CTXT, method, args)] += 1
            sent[method] += 1
            return
        try:
            raw.cast(CTXT, method, **args)
            sent[method] += 1
        except fuzz_inputs.NOT_SENDABLE:
            answers['not sendable'] += 1

    check()
    return sum(sent.values())


def _log_figures(server, start, sent):
    with open(server.log_path, 'rb') as log:
        log.seek(start)
        lines = log.read().splitlines()
    size = sum(len(line) + 1 for line in lines)
    return ('log during the fuzz: %d bytes, %.0f bytes per message, '
            'largest line %d bytes' % (
                size, size / max(sent, 1),
                max((len(line) for line in lines), default=0)))


@pytest.mark.parametrize('backend', ['postgresql'])
def test_long_fuzz(scheduler, summary_line):
    """Issue 24 point 6: LONG_FUZZ calls and LONG_FUZZ casts over every
    RPC method against two workers on PostgreSQL: every call answered
    clearly, no traceback, no worker death, workers' memory flat."""
    server = scheduler(workers=2)
    workload.push_hosts(server, workload.host_reports(5))
    raw = server.raw_client(server.client()).prepare(version='1.2',
                                                     timeout=30)
    _fuzz(raw, 100, collections.Counter(), cast=False)      # warm-up
    db_state.wait_for(lambda: shared_broker.drained(server.topic), 60,
                      'the warm-up handled')
    rss_before, log_start = _worker_rss(server), server.log_path.stat(
        ).st_size
    answers = collections.Counter()
    calls = _fuzz(raw, LONG_FUZZ, answers, cast=False)
    casts = _fuzz(raw, LONG_FUZZ, answers, cast=True)
    db_state.wait_for(lambda: shared_broker.drained(server.topic), 300,
                      'every cast handled')
    rss_after = _worker_rss(server)
    deaths = server.count_in_log(' died ')
    growth = {pid: rss_after.get(pid, 0) - rss
              for pid, rss in rss_before.items()}
    for line in (
            'long fuzz: %d calls, %d casts sent' % (calls, casts),
            'long fuzz: answers by class: %s' % dict(answers),
            'long fuzz: tracebacks in the server log: %d; worker deaths: '
            '%d' % (server.count_in_log('Traceback'), deaths),
            'long fuzz: %s' % _log_figures(server, log_start, calls + casts),
            'long fuzz: worker RSS MB before %s, after %s (bound +%d MB)' % (
                [rss >> 20 for rss in rss_before.values()],
                [rss_after.get(pid, 0) >> 20 for pid in rss_before],
                RSS_GROWTH_BOUND >> 20)):
        summary_line(line)
    assert not [a for a in answers if a.startswith('FAULT')], answers
    assert 'Traceback' not in server.log_text(), server.errors_in_log()
    assert deaths == 0 and set(rss_after) == set(rss_before)
    assert max(growth.values()) < RSS_GROWTH_BOUND, growth
