"""The servers' transport on a RabbitMQ cluster of three nodes
(``rabbit_cluster``): the node a server consumes through dies (SIGKILL)
under calls, and the server consumes through another one and answers
again within seconds, with classic queues (a non-durable queue whose
node died is declared again: the broker answers 404 for it until it is
deleted) and with quorum queues (their leader moves to a node that
lives). Then the dead node comes back and rejoins. And scheduler-server
itself, placing under load, loses the node that holds the leader of its
topic's quorum queue.
"""

import time
import uuid

import oslo_messaging
import pytest
from oslo_messaging.rpc import dispatcher as rpc_dispatcher

from scheduler import conf as sched_conf
from scheduler.rpc import late_ack
from scheduler.rpc import messaging
from scheduler.transport import broker
from tests import waiting
from tests.functional import fault_load
from tests.functional import rabbit_cluster
from tests.functional import rabbit_node
from tests.functional import server as server_mod
from tests.functional import services
from tests.functional import workload

#: seconds within which the server answers again after the node died
BACK_WITHIN = 10.0
QUORUM = {'rabbit_quorum_queue': True, 'rabbit_transient_quorum_queue': True}


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    rabbit_node.require()
    with services.one_cluster(), rabbit_cluster.running(
            tmp_path_factory.mktemp('cluster')) as c:
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


def _leader_of(cluster, queue):
    """The node that holds the leader of quorum queue ``queue``."""
    listed = cluster.nodes[0].ctl('list_queues', 'name', 'leader',
                                  '--no-table-headers', '--quiet')
    for line in listed.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == queue:
            [node] = [n for n in cluster.nodes if n.nodename == fields[1]]
            return node
    raise AssertionError('no leader listed for %s:\n%s' % (queue, listed))


@pytest.mark.parametrize('fault', ['kill', 'stop'])
def test_workers_under_load_lose_the_leader_of_their_queue(
        cluster, tmp_path, summary_line, fault):
    """scheduler-server (2 workers, quorum queues, the three nodes in
    ``transport_url``) placing under load; the node holding the leader
    of the scheduler topic's queue is killed (SIGKILL) or stopped
    (``rabbitmqctl stop``: it closes its connections first) and brought
    back.
    Every call is answered (placed, or an answer that says retry, after
    which the caller asks again for the same instance), placements flow
    again within seconds, nothing is overcommitted and no claim is left
    that its caller was not told of."""
    server = server_mod.SchedulerServer(
        tmp_path / 'scheduler',
        'sqlite:///%s' % (tmp_path / 'scheduler.sqlite'), workers=2,
        options={'DEFAULT': {'transport_url': cluster.transport_url()},
                 'oslo_messaging_rabbit': dict(QUORUM,
                                               rabbit_interval_max=2)})
    try:
        server.db_sync()
        server.start().wait_ready()
        # twice the fault tests' hosts: room for every placement of the
        # run, so that a NoValidHost could only come from the fault
        workload.push_hosts(server,
                            workload.host_reports(2 * fault_load.HOSTS))
        leader = _leader_of(cluster, server.topic)
        with fault_load.Load(server, threads=2, retry_same=True) as load:
            time.sleep(1)
            (leader.kill if fault == 'kill' else leader.stop)()
            killed = time.monotonic()
            time.sleep(5)
            leader.start()
            back = time.monotonic()
            time.sleep(2)
        again = load.first_success_after(killed)
        summary_line('cluster: leader of the topic queue %s under '
                     'load: %s; placements again after %s s; longest '
                     'wait %.1f s' % ('killed' if fault == 'kill' else
                                      'stopped', load.counts(),
                                      None if again is None
                                      else round(again, 2),
                                      load.longest_wait))
        assert load.unexpected() == []
        assert again is not None and again < BACK_WITHIN
        # and after the node rejoined
        assert load.first_success_after(back) is not None
        assert 'NoValidHost' not in load.counts()
        waiting.wait_for(lambda: fault_load.audit(server, load) == [], 15,
                         'no overcommit and no orphan claim')
        server.assert_alive()
    finally:
        server.close()
