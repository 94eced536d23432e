"""The servers' consumer loop on the real broker
(scheduler.transport.consumer_loop):
acknowledgements several at once, never before a message is handled, and a
slow message holds back no other; a stopped server leaves what it read to
the others; the loop keeps its connection's heartbeats, and outlives a
connection that fails under an acknowledgement or a channel the broker
closes.

Each test runs ``late_ack.CallServer`` in this process with a trivial
endpoint on a topic of its own on the shared RabbitMQ (its process's
vhost, ``shared_broker``), and calls it with oslo.messaging's own client.
"""

import contextlib
import socket
import threading
import time
import uuid

import kombu
import oslo_messaging
import pytest

from scheduler import conf as sched_conf
from scheduler.rpc import late_ack
from scheduler.rpc import messaging
from scheduler.transport import broker
from scheduler.transport import consumer_loop
from tests.functional import shared_broker
from tests import waiting
from tests import call_dispatcher

THREADS = 4


class _Endpoint:
    target = oslo_messaging.Target(version='1.0')

    def __init__(self):
        self.release = threading.Event()
        self.handled = []
        self.lock = threading.Lock()
        self.holding = 0
        self.redelivered = 0

    def echo(self, ctxt, value=None):
        with self.lock:
            self.handled.append(value)
        return value

    def hold(self, ctxt, value=None):
        with self.lock:
            self.redelivered += self.holding
            self.holding += 1
        self.release.wait(30)
        return self.echo(ctxt, value)


@pytest.fixture
def topic(rabbitmq):
    name = 'loop-%s' % uuid.uuid4().hex[:12]
    yield name
    with kombu.Connection(shared_broker.amqp_url(),
                          connect_timeout=5) as connection:
        channel = connection.channel()
        for queue in (name, '%s.w1' % name):
            try:
                channel.queue_delete(queue)
            except Exception:  # never declared: nothing to delete
                channel = connection.channel()


def _transport(heartbeat=None):
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('transport_url', shared_broker.transport_url())
    if heartbeat is not None:
        conf.set_override('heartbeat_timeout_threshold', heartbeat,
                          group='oslo_messaging_rabbit')
    return messaging.get_transport(conf)


@pytest.fixture
def transport():
    transport = _transport()
    yield transport
    transport.cleanup()


def _server(transport, topic, endpoint):
    server = late_ack.CallServer(
        broker.Broker(transport.conf),
        oslo_messaging.Target(topic=topic, server='w1'),
        call_dispatcher.CallDispatcher([endpoint], messaging.get_serializer()))
    server.start(override_pool_size=THREADS)
    return server


def _client(transport, topic, timeout=20):
    return oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic=topic), timeout=timeout)


@contextlib.contextmanager
def _echo_server(topic, heartbeat):
    """(server, client) of an echo endpoint on a transport of its own
    with heartbeats every ``heartbeat`` seconds (0: off); stopped and
    cleaned up after."""
    transport = _transport(heartbeat=heartbeat)
    server = _server(transport, topic, _Endpoint())
    try:
        yield server, _client(transport, topic)
    finally:
        server.stop()
        server.wait()
        transport.cleanup()


def _held_call(client):
    """A thread calling ``hold`` (it runs until the endpoint's release)."""
    held = threading.Thread(target=client.call, args=({}, 'hold'),
                            kwargs={'value': 'slow'})
    held.start()
    return held


def _queued(topic):
    """Messages ready in the topic's queue (unacknowledged ones count
    once the server's channel is closed)."""
    with kombu.Connection(shared_broker.amqp_url(),
                          connect_timeout=5) as connection:
        _, count, _ = connection.channel().queue_declare(topic,
                                                         passive=True)
        return count


def _amqp(loop):
    """The loop's AMQP connection now (None while it has none)."""
    return getattr(loop.connection, 'connection', None)


def test_a_slow_call_holds_back_no_other_and_all_are_acknowledged(
        transport, topic):
    endpoint = _Endpoint()
    server = _server(transport, topic, endpoint)
    client = _client(transport, topic)
    try:
        held = _held_call(client)
        waiting.wait_for(lambda: endpoint.holding, 10, 'the slow call')
        # five times the prefetch while the first call holds its slot:
        # each answered call is acknowledged although an older one is not
        started = time.monotonic()
        for index in range(THREADS * 5):
            assert client.call({}, 'echo', value=index) == index
        assert time.monotonic() - started < 10
        endpoint.release.set()
        held.join(30)
        assert endpoint.handled[-1] == 'slow'
    finally:
        server.stop()
        server.wait()
    # nothing was left unacknowledged: the queue is empty once the
    # server's channel closed (an unacknowledged message would be back)
    assert _queued(topic) == 0


def test_a_stopped_server_leaves_what_it_did_not_handle_to_others(
        transport, topic):
    endpoint = _Endpoint()
    server = _server(transport, topic, endpoint)
    client = _client(transport, topic)
    try:
        assert client.call({}, 'echo', value='first') == 'first'
        server.stop()
        # sent after the consumers were cancelled: never taken by it
        client.cast({}, 'echo', value='late')
        # in the queue, and no consumer there to take it
        waiting.wait_for(lambda: _queued(topic) == 1, 10,
                         'the late cast in the queue')
    finally:
        server.wait()
    assert endpoint.handled == ['first']
    assert _queued(topic) == 1
    # another server takes it
    other = _server(transport, topic, endpoint)
    try:
        waiting.wait_for(lambda: 'late' in endpoint.handled, 10,
                         'the late cast taken by the other server')
    finally:
        other.stop()
        other.wait()
    assert _queued(topic) == 0


def test_a_message_still_running_is_never_acknowledged_with_others(
        transport, topic):
    """Calls answered after a slow one are acknowledged; the slow one is
    not: when the connection drops under it, the broker delivers it
    again (one of the quick calls' acknowledgements covering it would
    have lost it)."""
    endpoint = _Endpoint()
    server = _server(transport, topic, endpoint)
    client = _client(transport, topic)
    try:
        held = _held_call(client)
        waiting.wait_for(lambda: endpoint.holding, 10, 'the slow call')
        for index in range(3):
            assert client.call({}, 'echo', value=index) == index
        # their acknowledgements are out: the slow call alone is not
        waiting.wait_for(
            lambda: shared_broker.queue_counts(topic) == (0, 1), 20,
            'the quick calls acknowledged')
        # the connection drops: the loop reconnects, and the broker
        # hands the unacknowledged slow call over again
        amqp = server.loop.connection.connection
        amqp.sock.shutdown(socket.SHUT_RDWR)
        waiting.wait_for(lambda: endpoint.redelivered >= 1, 20,
                         'the slow call delivered again (lost?)')
        endpoint.release.set()
        held.join(30)
    finally:
        endpoint.release.set()
        server.stop()
        server.wait()
    assert sorted(v for v in endpoint.handled if v != 'slow') == [0, 1, 2]


def test_the_loop_outlives_a_connection_that_fails_under_an_acknowledgement(
        transport, topic):
    """The socket breaks just before a handled cast is acknowledged: the
    loop drops the connection and consumes on a new one (it used to end
    its thread on the failed acknowledgement, and the worker took
    nothing more)."""
    endpoint = _Endpoint()
    server = _server(transport, topic, endpoint)
    client = _client(transport, topic)
    try:
        client.cast({}, 'hold', value='slow')
        waiting.wait_for(lambda: endpoint.holding, 10,
                         'the cast never arrived')
        loop = server.loop
        first = loop.connection.connection
        loop.run_soon(lambda: first.sock.shutdown(socket.SHUT_RDWR))
        endpoint.release.set()      # the cast ends; its settle follows
        waiting.wait_for(lambda: 'slow' in endpoint.handled, 10,
                         'cast not done')
        waiting.wait_for(lambda: _amqp(loop) not in (None, first), 20,
                         'the loop consuming on a new connection')
        assert loop._thread.is_alive()
        assert client.call({}, 'echo', value='after') == 'after'
    finally:
        endpoint.release.set()
        server.stop()
        server.wait()
    assert _queued(topic) == 0


def test_an_idle_connection_keeps_its_heartbeats(topic):
    """A listen connection has no heartbeat thread: the loop sends its
    heartbeats, or the broker closes a quiet connection after two missed
    ones (here 2 s each)."""
    with _echo_server(topic, heartbeat=2) as (server, client):
        assert client.call({}, 'echo', value=1) == 1
        connection = server.loop.connection.connection
        assert connection.heartbeat == 2
        time.sleep(9)       # idle for four heartbeats' worth, on purpose
        assert server.loop.connection.connection is connection
        assert client.call({}, 'echo', value=2) == 2


def test_a_channel_the_broker_closes_voids_what_was_read_on_it(
        transport, topic):
    """The broker closes the channel (406, as its consumer timeout does)
    while a call runs: the loop consumes on a new channel, never
    acknowledges the running call on it (its delivery tag means another
    message there), and the broker delivers the call again."""
    endpoint = _Endpoint()
    server = _server(transport, topic, endpoint)
    client = _client(transport, topic)
    try:
        held = _held_call(client)
        waiting.wait_for(lambda: endpoint.holding, 10,
                         'the call never arrived')
        loop = server.loop
        channel = loop.channel
        # an acknowledgement of a delivery the channel never had: the
        # broker closes the channel
        loop.run_soon(lambda: loop.channel.basic_ack(999))
        waiting.wait_for(lambda: endpoint.redelivered, 20,
                         'the running call was not delivered again')
        assert loop.channel is not channel
        endpoint.release.set()
        held.join(30)
        assert client.call({}, 'echo', value='after') == 'after'
        assert loop._thread.is_alive()
    finally:
        endpoint.release.set()
        server.stop()
        server.wait()
    assert _queued(topic) == 0


class _NotStored(Exception):
    pass


class _FailsOnce(_Endpoint):
    def fail(self, ctxt, value=None):
        with self.lock:
            self.holding += 1
            first = self.holding == 1
        if first:
            self.release.wait(30)
            raise _NotStored(value)
        return self.echo(ctxt, value)


class _RequeueOnce(late_ack.CallServer):
    requeue_once = (_NotStored,)


def test_a_requeue_of_a_message_read_before_a_reconnection_keeps_the_new(
        transport, topic, caplog):
    """A cast fails after the loop reconnected: its requeue is void (its
    channel is gone, the broker delivers it again) and leaves the new
    connection alone (it used to count as a failure of the connection,
    and dropped the new one)."""
    endpoint = _FailsOnce()
    server = _RequeueOnce(
        broker.Broker(transport.conf),
        oslo_messaging.Target(topic=topic, server='w1'),
        call_dispatcher.CallDispatcher([endpoint], messaging.get_serializer()))
    server.start(override_pool_size=THREADS)
    client = _client(transport, topic)
    try:
        client.cast({}, 'fail', value='report')
        waiting.wait_for(lambda: endpoint.holding, 10,
                         'the cast never arrived')
        loop = server.loop
        first = loop.connection.connection
        loop.run_soon(lambda: first.sock.shutdown(socket.SHUT_RDWR))
        waiting.wait_for(lambda: not loop._recover and
                         loop.connection.connection not in (None, first),
                         20, 'no new connection')
        second = loop.connection.connection
        assert client.call({}, 'echo', value=1) == 1
        endpoint.release.set()      # the first delivery fails: requeued
        waiting.wait_for(lambda: 'report' in endpoint.handled, 20,
                         'the cast was not delivered again')
        # the failed first delivery asked for its requeue, and the loop
        # has run it (work runs in order)
        waiting.wait_for(
            lambda: 'the broker will deliver it again' in caplog.text, 20,
            'the requeue of the first delivery')
        loop.call(lambda: None, timeout=10)
        assert loop.connection.connection is second
    finally:
        endpoint.release.set()
        server.stop()
        server.wait()
    assert _queued(topic) == 0


def _idle_cpu(server, seconds=2.0):
    """CPU seconds this process used while ``server`` idled."""
    time.sleep(0.5)         # the last call's aftermath is not idling
    started = time.process_time()
    time.sleep(seconds)     # the idle period measured
    return time.process_time() - started


def test_a_loop_without_heartbeats_waits_instead_of_spinning(topic):
    """``heartbeat_timeout_threshold = 0`` (heartbeats off, as the
    simulator sets them): the loop waits on the socket as long as it
    likes (it once waited 0 s, spinning a core)."""
    with _echo_server(topic, heartbeat=0) as (server, client):
        assert client.call({}, 'echo', value=1) == 1
        assert _idle_cpu(server) < 0.5
        assert client.call({}, 'echo', value=2) == 2


def test_a_message_its_server_cannot_take_is_not_lost(transport, topic):
    """The server's hand-over raises (its pool was shut down while the
    loop still read): the message stays unacknowledged and goes back to
    the queue when the connection closes (raised to the driver, it was
    rejected: lost)."""
    offered = threading.Event()

    def cannot_take(message):
        offered.set()
        raise RuntimeError('cannot schedule new futures after shutdown')
    loop = consumer_loop.ConsumerLoop(
        broker.Broker(transport.conf),
        oslo_messaging.Target(topic=topic, server='w1'),
        cannot_take, name='test-loop')
    loop.start()
    try:
        _client(transport, topic).cast({}, 'echo', value='kept')
        waiting.wait_for(offered.is_set, 10, 'the cast offered to the server')
        # the loop is past the failed hand-over (it runs work in order)
        loop.call(lambda: None, timeout=10)
        assert loop._thread.is_alive()
    finally:
        loop.stop_consuming(timeout=5)
        loop.close(timeout=5)
    assert _queued(topic) == 1
