"""A reply the broker did not confirm in time (a RabbitMQ node cut off
from its cluster, ``scheduler.transport.confirms``) is sent again through
another node, and so are the replies of the next ``REPLIES_ELSEWHERE``
seconds, while the consumer loop keeps its connection: reconnecting
would consume nothing sooner, and a good node does not confirm a reply
to a queue the cut-off node leads either."""

import time

import oslo_messaging
import pytest
from oslo_messaging.rpc import dispatcher as rpc_dispatcher

from scheduler.rpc import late_ack
from scheduler.rpc import messaging
from scheduler.transport import broker
from scheduler.transport import confirms
from scheduler.transport import consumer_loop


class _Echo:
    target = oslo_messaging.Target(version='1.0')

    def echo(self, ctxt, value=None):
        return value


class _Dispatcher(rpc_dispatcher.RPCDispatcher):
    """oslo.messaging's dispatcher, given the server's record of the
    call or not."""

    def dispatch(self, incoming, call=None):
        return super().dispatch(incoming)


#: seconds replies go elsewhere, here
WINDOW = 3.0


@pytest.fixture
def echo(conf, monkeypatch):
    monkeypatch.setattr(consumer_loop, 'REPLIES_ELSEWHERE', WINDOW)
    conf.set_override('transport_url', messaging.EMBEDDED_TRANSPORT_URL)
    conf.set_override('heartbeat_timeout_threshold', 0,
                      group='oslo_messaging_rabbit')
    through_loop, alone = [], []
    unconfirmed = [True]

    def publish(producer, confirming, broker_, body, routing_key):
        if not sending_alone:
            through_loop.append(body)
            if unconfirmed.pop() if unconfirmed else False:
                raise confirms.Unconfirmed('no confirm within 5.0 s')
        real_publish(producer, confirming, broker_, body, routing_key)

    sending_alone = []

    def publish_once(broker_, body, routing_key):
        alone.append(body)
        sending_alone.append(True)
        try:
            real_publish_once(broker_, body, routing_key)
        finally:
            sending_alone.pop()

    real_publish = consumer_loop._publish
    real_publish_once = consumer_loop.publish_once
    monkeypatch.setattr(consumer_loop, '_publish', publish)
    monkeypatch.setattr(consumer_loop, 'publish_once', publish_once)
    transport = messaging.get_transport(conf)
    server = late_ack.CallServer(
        broker.Broker(conf), oslo_messaging.Target(topic='cut', server='w1'),
        _Dispatcher([_Echo()], messaging.get_serializer()))
    server.start(override_pool_size=2)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='cut'), timeout=10)
    try:
        yield client, server, through_loop, alone
    finally:
        server.stop()
        server.wait()
        transport.cleanup()


def test_replies_go_elsewhere_for_a_while_on_the_same_connection(echo):
    client, server, through_loop, alone = echo
    connection = server.loop.connection
    started = time.monotonic()
    assert client.call({}, 'echo', value=1) == 1
    assert (len(through_loop), len(alone)) == (1, 1)
    assert client.call({}, 'echo', value=2) == 2   # not tried on the loop
    if time.monotonic() - started < WINDOW:
        assert (len(through_loop), len(alone)) == (1, 2)
    assert server.loop.connection is connection
    time.sleep(max(0.0, started + WINDOW + 0.1 - time.monotonic()))
    before = len(through_loop), len(alone)
    assert client.call({}, 'echo', value=3) == 3    # through the loop
    assert (len(through_loop), len(alone)) == (before[0] + 1, before[1])
    assert server.loop.connection is connection
