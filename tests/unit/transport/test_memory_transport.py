"""The embedded transport polls an empty queue every POLL_INTERVAL
instead of spinning (scheduler.transport.memory), and so does a
server's consumer loop on it."""

import time

import kombu
import oslo_messaging

from scheduler.rpc import late_ack
from scheduler.rpc import messaging
from scheduler.transport import broker
from scheduler.transport import memory as memory_transport
from tests import call_dispatcher


def test_embedded_url_names_the_polled_transport(conf):
    messaging.get_transport(conf)   # registers the alias
    url = messaging.EMBEDDED_TRANSPORT_URL.replace('kombu+', '')
    with kombu.Connection(url) as connection:
        transport = connection.transport
    assert isinstance(transport, memory_transport.Transport)
    assert transport.polling_interval == memory_transport.POLL_INTERVAL > 0


def test_a_server_on_it_idles_without_spinning(conf):
    """The consumer loop on the embedded transport (heartbeats off, as
    the simulator runs it) polls every POLL_INTERVAL: it once polled with
    no wait at all, and a worker's idle loop took a core."""
    class Echo:
        target = oslo_messaging.Target(version='1.0')

        def echo(self, ctxt, value=None):
            return value

    conf.set_override('transport_url', messaging.EMBEDDED_TRANSPORT_URL)
    conf.set_override('heartbeat_timeout_threshold', 0,
                      group='oslo_messaging_rabbit')
    transport = messaging.get_transport(conf)
    server = late_ack.CallServer(
        broker.Broker(conf), oslo_messaging.Target(topic='idle', server='w1'),
        call_dispatcher.CallDispatcher([Echo()], messaging.get_serializer()))
    server.start(override_pool_size=2)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='idle'), timeout=10)
    try:
        assert client.call({}, 'echo', value=1) == 1
        time.sleep(0.3)         # the call's aftermath is not idling
        started = time.process_time()
        time.sleep(1.5)         # the idle period measured
        assert time.process_time() - started < 0.75
    finally:
        server.stop()
        server.wait()
        transport.cleanup()
