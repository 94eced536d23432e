"""Transport, serializer and RPC server set-up (oslo.messaging).

Every transport allows ``scheduler.exception`` as a remote exception
module, so callers catch ``scheduler.exception.NoValidHost`` itself.
``EMBEDDED_TRANSPORT_URL`` is the in-process default of the simulator and
of unit tests: the rabbit driver over kombu's in-memory transport. It only
reaches servers of the same process.
"""

import oslo_messaging
from oslo_messaging.rpc import server as rpc_server

from scheduler import conf as sched_conf
from scheduler.rpc import inbound
from scheduler import objects
from scheduler.rpc import report_consumer

ALLOWED_EXMODS = ['scheduler.exception']
EMBEDDED_TRANSPORT_URL = 'kombu+memory:////'


def get_transport(conf, url=None):
    sched_conf.messaging.register_opts(conf)
    return oslo_messaging.get_rpc_transport(
        conf, url=url, allowed_remote_exmods=ALLOWED_EXMODS)


def get_serializer():
    return objects.SchedulerObjectSerializer()


class Servers:
    """The RPC servers of one worker, started and stopped together: one on
    ``[scheduler] topic`` (decisions, pushed data) and one on the report
    topic (trackers' casts), each with its own threads, so reports never
    hold up a select_destinations call in its queue or its thread pool."""

    def __init__(self, servers):
        self.servers = servers

    def start(self):
        for server in self.servers:
            server.start(
                override_pool_size=getattr(server, 'pool_size', None))

    def stop(self):
        for server in self.servers:
            server.stop()

    def wait(self):
        for server in self.servers:
            server.wait()


#: what a worker serves: both topics, decisions only, reports only
SERVES_ALL = 'all'
SERVES_DECISIONS = 'decisions'
SERVES_REPORTS = 'reports'


def get_server(conf, transport, endpoints, serves=SERVES_ALL):
    """The worker's RPC servers (threading executor): on both topics, or
    on one of them (``serves``, see ``[DEFAULT] report_workers``).

    The server name is ``[DEFAULT] host``; calls without a server go to
    whichever worker of any scheduler takes them from the shared queue.
    Every endpoint method is served on both topics. The report topic's
    server acknowledges a cast only once its endpoint returned
    (``scheduler.rpc.report_consumer``).
    """
    report_topic = sched_conf.scheduler.report_topic(conf)
    sched_conf.limits.register_opts(conf)
    inbound.install(conf.limits.max_message_bytes)
    servers = []
    if serves in (SERVES_ALL, SERVES_DECISIONS):
        servers.append(_server(conf, transport, conf.scheduler.topic,
                               endpoints, rpc_server.RPCServer))
    if serves in (SERVES_ALL, SERVES_REPORTS):
        servers.append(_server(conf, transport, report_topic, endpoints,
                               report_consumer.ReportServer))
    return Servers(servers)


def _server(conf, transport, topic, endpoints, server_cls):
    # our dispatcher: bad input and database outages become answers; it is
    # imported here because it needs oslo.db, which clients must not load
    from scheduler.rpc import dispatcher
    return server_cls(
        transport, oslo_messaging.Target(topic=topic, server=conf.host),
        dispatcher.SchedulerDispatcher(endpoints, get_serializer(),
                                       conf.limits, conf.host),
        executor='threading')
