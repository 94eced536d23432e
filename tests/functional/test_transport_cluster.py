"""The servers' transport on a RabbitMQ cluster of three nodes
(``rabbit_cluster``): the node a server consumes through dies (SIGKILL)
under calls, and the server consumes through another one and answers
again within seconds, with classic queues (a non-durable queue whose
node died is declared again: the broker answers 404 for it until it is
deleted) and with quorum queues (their leader moves to a node that
lives). Then the dead node comes back and rejoins.
"""

import os
import time
import uuid

import oslo_messaging
import pytest
from oslo_messaging.rpc import dispatcher as rpc_dispatcher

from scheduler import conf as sched_conf
from scheduler.rpc import late_ack
from scheduler.rpc import messaging
from scheduler.transport import broker
from tests.functional import rabbit_cluster
from tests.functional import rabbit_node

#: seconds within which the server answers again after the node died
BACK_WITHIN = 10.0
QUORUM = {'rabbit_quorum_queue': True, 'rabbit_transient_quorum_queue': True}


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    why = rabbit_node.available()
    if why:
        if os.environ.get('CI') == 'true':
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    with rabbit_cluster.running(tmp_path_factory.mktemp('cluster')) as c:
        yield c


class _Echo:
    target = oslo_messaging.Target(version='1.0')

    def echo(self, ctxt, value=None):
        return value


def _conf(cluster, options, exchange):
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('transport_url', cluster.transport_url())
    conf.set_override('control_exchange', exchange)
    for name, value in options.items():
        conf.set_override(name, value, group='oslo_messaging_rabbit')
    return conf


@pytest.mark.parametrize('options', [{}, QUORUM], ids=['classic', 'quorum'])
def test_the_node_a_server_consumes_through_dies(cluster, options,
                                                 summary_line):
    topic = 'cluster-%s' % uuid.uuid4().hex[:8]
    conf = _conf(cluster, options, topic)
    server = late_ack.CallServer(
        broker.Broker(conf), oslo_messaging.Target(topic=topic,
                                                   server='w1'),
        rpc_dispatcher.RPCDispatcher([_Echo()],
                                     messaging.get_serializer()))
    server.start(override_pool_size=2)
    transport = messaging.get_transport(_conf(cluster, options, topic))
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic=topic), timeout=5)
    victim = None
    try:
        assert client.call({}, 'echo', value=1) == 1
        port = server.loop.connection.connection.sock.getpeername()[1]
        victim = cluster.node_on_port(port)
        victim.kill()
        died = time.monotonic()
        while True:
            try:
                assert client.prepare(timeout=2).call(
                    {}, 'echo', value=2) == 2
                break
            except oslo_messaging.MessagingTimeout:
                assert time.monotonic() - died < BACK_WITHIN + 20, \
                    'not served again'
        back = time.monotonic() - died
        summary_line('cluster[%s]: the node consumed through killed; '
                     'served again after %.1f s' % (
                         'quorum' if options else 'classic', back))
        assert back <= BACK_WITHIN
        for value in range(3, 13):
            assert client.call({}, 'echo', value=value) == value
    finally:
        server.stop()
        server.wait()
        transport.cleanup()
        if victim is not None:
            victim.start()      # it rejoins, for the next test
