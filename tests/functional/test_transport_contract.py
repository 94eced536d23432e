"""The transport's contract with oslo.messaging, on the real broker.

The servers read and answer through ``scheduler.transport`` (kombu's
public API) in oslo.messaging's rabbit wire format; the clients are
oslo.messaging's own. These tests hold both ends to oslo.messaging as
it is installed (``tox -e oldest-messaging`` runs them at the lowest
version ``requirements.txt`` admits, ``tox -e constrained`` at
``upper-constraints.txt``'s):

* oslo.messaging's own client against this server: calls (to the topic
  and to one server), casts, fanout casts, a remote exception of an
  allowed module and one of another, a call that times out, a call that
  outlives its call-monitor timeout;
* this server and oslo.messaging's own ``RPCServer`` consuming the same
  queues, whichever declares them first, with classic queues and with
  quorum queues (``rabbit_quorum_queue``, ``rabbit_transient_quorum_
  queue``): neither side's declaration fails, both serve, and the
  queue is of the type asked for;
* a ``transport_url`` of several hosts, one of them down; a consumer
  the broker cancels (its queue deleted);
* the scheduler's client (``SchedulerClient``) against oslo.messaging's
  own ``RPCServer``.
"""

import contextlib
import threading
import time
import uuid

import kombu
import oslo_messaging
import pytest
from amqp import exceptions as amqp_exceptions

from scheduler import conf as sched_conf
from scheduler import exception
from scheduler.client import SchedulerClient
from scheduler.rpc import late_ack
from scheduler.rpc import messaging
from scheduler.transport import broker
from tests.functional import services
from tests.functional import workload
from tests import waiting
from tests import call_dispatcher

AMQP_URL = services.RABBIT_URL.replace('rabbit', 'amqp')
QUORUM = {'rabbit_quorum_queue': True, 'rabbit_transient_quorum_queue': True}


class _Endpoint:
    target = oslo_messaging.Target(version='1.0')

    def __init__(self, name):
        self.name = name
        self.seen = []
        self.lock = threading.Lock()

    def echo(self, ctxt, value=None):
        with self.lock:
            self.seen.append(value)
        return [self.name, value]

    def no_host(self, ctxt):
        raise exception.NoValidHost(reason='contract test')

    def broken(self, ctxt):
        raise KeyError('not allowed across the wire')

    def slow(self, ctxt, seconds):
        time.sleep(seconds)
        return seconds


def _conf(options=None, exchange=None):
    """A config on the shared broker; ``exchange``: a control exchange
    of the test's own (quorum queues make oslo.messaging declare it
    durable, and the shared ``scheduler`` exchange is not)."""
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('transport_url', services.RABBIT_URL)
    if exchange:
        conf.set_override('control_exchange', exchange)
    for name, value in (options or {}).items():
        conf.set_override(name, value, group='oslo_messaging_rabbit')
    return conf


@pytest.fixture
def topic(rabbitmq):
    name = 'contract-%s' % uuid.uuid4().hex[:12]
    yield name
    with kombu.Connection(AMQP_URL, connect_timeout=5) as connection:
        for queue in (name, '%s.w1' % name, '%s.w2' % name):
            try:
                connection.channel().queue_delete(queue)
            except Exception:  # never declared: nothing to delete
                pass
        try:
            connection.channel().exchange_delete(name)
        except Exception:  # the test used the shared one
            pass


@contextlib.contextmanager
def _ours(conf, topic, endpoint, server='w1'):
    """This project's server (``late_ack.CallServer``) of ``endpoint``."""
    ours = late_ack.CallServer(
        broker.Broker(conf), oslo_messaging.Target(topic=topic,
                                                   server=server),
        call_dispatcher.CallDispatcher([endpoint], messaging.get_serializer()))
    ours.start(override_pool_size=4)
    try:
        yield ours
    finally:
        ours.stop()
        ours.wait()


@contextlib.contextmanager
def _oslo_server(transport, topic, endpoint, server='w2'):
    """oslo.messaging's own ``RPCServer`` of ``endpoint``."""
    theirs = oslo_messaging.get_rpc_server(
        transport, oslo_messaging.Target(topic=topic, server=server),
        [endpoint], executor='threading',
        serializer=messaging.get_serializer())
    theirs.start()
    try:
        yield theirs
    finally:
        theirs.stop()
        theirs.wait()


@contextlib.contextmanager
def _transport(conf):
    transport = messaging.get_transport(conf)
    try:
        yield transport
    finally:
        transport.cleanup()


def _client(transport, topic, **kwargs):
    kwargs.setdefault('timeout', 20)
    return oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic=topic), **kwargs)


@pytest.mark.parametrize('options', [{}, QUORUM], ids=['classic', 'quorum'])
def test_oslo_messaging_s_client_against_this_server(topic, options):
    conf = _conf(options, exchange=topic)
    first, second = _Endpoint('w1'), _Endpoint('w2')
    with _transport(conf) as transport, \
            _ours(conf, topic, first, 'w1'), \
            _ours(conf, topic, second, 'w2'):
        client = _client(transport, topic)
        answered = {client.call({}, 'echo', value=n)[0] for n in range(8)}
        assert answered <= {'w1', 'w2'} and answered
        assert client.prepare(server='w2').call({}, 'echo', value='to w2') \
            == ['w2', 'to w2']
        client.cast({}, 'echo', value='cast')
        client.prepare(fanout=True).cast({}, 'echo', value='fanout')
        waiting.wait_for(
            lambda: 'fanout' in first.seen and 'fanout' in second.seen
            and 'cast' in first.seen + second.seen, 10,
                  'a cast or the fanout cast did not arrive')
        # an exception of an allowed module comes back as itself
        with pytest.raises(exception.NoValidHost):
            client.call({}, 'no_host')
        # one of another module too (builtins are always allowed); a
        # project module that is not allowed would be RemoteError
        with pytest.raises(KeyError):
            client.call({}, 'broken')
        with pytest.raises(oslo_messaging.MessagingTimeout):
            client.prepare(timeout=1).call({}, 'slow', seconds=3)
        # heartbeats keep a call alive past its call-monitor timeout
        assert client.prepare(timeout=20, call_monitor_timeout=2).call(
            {}, 'slow', seconds=4) == 4
    assert (first.seen + second.seen).count('cast') == 1


def _declare(channel, queue, arguments):
    """Declare ``queue`` (durable, as quorum queues are) with
    ``arguments``; the broker's refusal is raised."""
    channel.queue_declare(queue=queue, durable=True, auto_delete=False,
                          arguments=arguments)


@pytest.mark.parametrize('first', ['ours', 'oslo.messaging'])
@pytest.mark.parametrize('options', [{}, QUORUM], ids=['classic', 'quorum'])
def test_this_server_and_oslo_messaging_s_server_share_a_queue(
        topic, options, first):
    conf = _conf(options, exchange=topic)
    mine, theirs = _Endpoint('ours'), _Endpoint('oslo.messaging')
    with _transport(conf) as transport, contextlib.ExitStack() as stack:
        starts = [lambda: stack.enter_context(_ours(conf, topic, mine)),
                  lambda: stack.enter_context(
                      _oslo_server(transport, topic, theirs))]
        for start in (starts if first == 'ours' else starts[::-1]):
            start()
        client = _client(transport, topic)
        deadline = time.monotonic() + 30
        while not (mine.seen and theirs.seen):
            assert time.monotonic() < deadline, 'one server never served'
            client.call({}, 'echo', value='x')
        client.prepare(fanout=True).cast({}, 'echo', value='fanout')
        waiting.wait_for(
            lambda: 'fanout' in mine.seen and 'fanout' in theirs.seen,
            10, 'the fanout cast did not reach both servers')
    with kombu.Connection(AMQP_URL, connect_timeout=5) as connection:
        if options:
            # a quorum queue: declaring it as a classic one is refused
            with pytest.raises(amqp_exceptions.PreconditionFailed):
                _declare(connection.channel(), topic, {})
            _declare(connection.channel(), topic,
                     {'x-queue-type': 'quorum'})
        else:
            with pytest.raises(amqp_exceptions.PreconditionFailed):
                _declare(connection.channel(), topic,
                         {'x-queue-type': 'quorum'})


class _SchedulerLike:
    """What oslo.messaging's own server answers the scheduler's client
    with: the version discovery, a NoValidHost, the report cast."""

    target = oslo_messaging.Target(version='1.3')

    def __init__(self):
        self.reports = []

    def get_service_versions(self, ctxt):
        return [{'rpc_version': '1.3'}]

    def select_destinations(self, ctxt, spec_obj, instance_uuids,
                            return_alternates=False):
        raise exception.NoValidHost(
            reason='%d vcpus asked of an oslo.messaging server'
            % spec_obj.flavor.vcpus)

    def update_resource_stats(self, ctxt, name, stats):
        self.reports.append((name, stats.vcpus_used))


def test_quorum_queues_on_an_exchange_declared_before(topic, caplog):
    """Quorum queues turned on where the control exchange exists
    non-durable (declared by servers before): this server takes the
    exchange as it is (oslo.messaging's own server falls back to a
    non-durable queue there, which a quorum queue cannot be) and
    serves, with a warning."""
    conf = _conf(QUORUM, exchange=topic)
    with kombu.Connection(AMQP_URL, connect_timeout=5) as connection:
        kombu.Exchange(topic, type='topic', durable=False)(
            connection.channel()).declare()
    endpoint = _Endpoint('w1')
    with _transport(_conf(exchange=topic)) as transport, \
            _ours(conf, topic, endpoint):
        assert _client(transport, topic).call({}, 'echo', value=1) == [
            'w1', 1]
    assert 'exists non-durable; using it as it is' in caplog.text


def test_a_transport_url_of_several_hosts_fails_over(topic):
    """``transport_url`` names a host where no broker listens beside the
    shared one: the server connects to the one that answers, whatever
    the order (the hosts are tried shuffled, as oslo.messaging does)."""
    conf = _conf()
    conf.set_override('transport_url', 'rabbit://guest:guest@127.0.0.1:1,'
                      'guest:guest@127.0.0.1:5672/')
    endpoint = _Endpoint('w1')
    for _ in range(3):
        with _transport(_conf()) as transport, _ours(conf, topic, endpoint):
            assert _client(transport, topic).call({}, 'echo', value=2) == [
                'w1', 2]


def test_the_scheduler_s_client_against_oslo_messaging_s_server(topic):
    conf = _conf()
    sched_conf.register_all(conf)
    conf.set_override('topic', topic, group='scheduler')
    endpoint = _SchedulerLike()
    report_topic = sched_conf.scheduler.report_topic(conf)
    with _transport(conf) as transport, \
            _oslo_server(transport, topic, endpoint), \
            _oslo_server(transport, report_topic, endpoint):
        client = SchedulerClient(conf)
        try:
            spec = workload.object_spec({'vcpus': 3, 'memory_mb': 512,
                                         'root_gb': 1, 'ephemeral_gb': 0})
            with pytest.raises(exception.NoValidHost) as caught:
                client.select_destinations(workload.context(), spec)
            assert '3 vcpus' in str(caught.value)
            [(name, stats)] = workload.host_reports(1)
            client.update_resource_stats(workload.context(), name, stats)
            waiting.wait_for(lambda: endpoint.reports, 10, 'no report arrived')
        finally:
            client.close()
    assert endpoint.reports == [(name, stats['vcpus_used'])]


def test_a_consumer_the_broker_cancels_consumes_again(topic):
    """The broker cancels the server's consumer (its queue was deleted,
    as an operator or a failed-over queue leader does): the server
    declares the queue again and serves, rather than idling on a
    consumer that no longer exists."""
    conf = _conf()
    endpoint = _Endpoint('w1')
    with _transport(_conf()) as transport, _ours(conf, topic, endpoint):
        client = _client(transport, topic)
        assert client.call({}, 'echo', value=1) == ['w1', 1]
        with kombu.Connection(AMQP_URL, connect_timeout=5) as connection:
            connection.channel().queue_delete(topic)
        deadline = time.monotonic() + 15
        while True:
            try:
                assert client.prepare(timeout=2).call(
                    {}, 'echo', value=2) == ['w1', 2]
                break
            except oslo_messaging.MessagingTimeout:
                # the call went to the deleted queue, or to none
                assert time.monotonic() < deadline, 'never served again'
