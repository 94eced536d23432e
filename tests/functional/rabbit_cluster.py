"""A private RabbitMQ cluster for functional tests: three nodes on this
machine (``rabbit_node.RabbitNode``: own node names, ports and data
dirs), sharing one Erlang cookie, the second and third joined to the
first::

    with rabbit_cluster.running(tmp_path / 'cluster') as cluster:
        cluster.transport_url()      # 'rabbit://guest:guest@h:p1,...,h:p3/'
        cluster.node_on_port(port)   # the RabbitNode listening there
        node.kill()                  # SIGKILL, as a crash would
        node.start()                 # it rejoins the cluster

Three nodes, because a quorum queue needs a majority to serve: a cluster
of three keeps serving with one node down. As kolla-ansible configures
them, a node that finds itself in a minority pauses
(``cluster_partition_handling = pause_minority``: it closes its clients'
connections until it sees a majority again). Each node runs with a group
id of its own (``RabbitNode.group``), so that ``rabbit_partition`` can
cut one off from the others, and with ``net_ticktime`` at
``NET_TICKTIME`` seconds instead of 60, so that the others notice within
a test's time (between 1 and 1.25 times it); the environment variable
``SCHEDULER_RABBIT_NET_TICKTIME`` sets another value.
"""

import contextlib
import os
import uuid

from tests.functional import rabbit_node

NODES = 3
#: seconds of silence after which a node holds another for gone
#: (``SCHEDULER_RABBIT_NET_TICKTIME``: RabbitMQ's default is 60)
NET_TICKTIME = int(os.environ.get('SCHEDULER_RABBIT_NET_TICKTIME', 8))
#: the first node's group id; the others follow
GROUP_BASE = 23800


class RabbitCluster:

    def __init__(self, base_dir, size=NODES):
        cookie = uuid.uuid4().hex.upper()
        self.nodes = []
        for index in range(size):
            node = rabbit_node.RabbitNode(base_dir / ('node%d' % index),
                                          group=GROUP_BASE + index)
            path = node.base_dir / '.erlang.cookie'
            path.write_text(cookie)
            os.chmod(path, 0o400)
            with open(node.base_dir / 'rabbitmq.conf', 'a') as conf:
                conf.write('cluster_partition_handling = pause_minority\n')
            (node.base_dir / 'advanced.config').write_text(
                '[{kernel, [{net_ticktime, %d}]}].\n' % NET_TICKTIME)
            self.nodes.append(node)

    def start(self):
        for node in self.nodes:
            node.start()
        first = self.nodes[0]
        for node in self.nodes[1:]:
            node.ctl('stop_app')
            node.ctl('join_cluster', first.nodename)
            node.ctl('start_app')

    def stop(self):
        for node in self.nodes:
            node.kill()

    def transport_url(self, user='guest', password='guest'):
        return 'rabbit://%s/' % ','.join(
            '%s:%s@%s:%d' % (user, password, rabbit_node.HOST, node.port)
            for node in self.nodes)

    def node_on_port(self, port):
        [node] = [n for n in self.nodes if n.port == port]
        return node


@contextlib.contextmanager
def running(base_dir, size=NODES):
    cluster = RabbitCluster(base_dir, size)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
