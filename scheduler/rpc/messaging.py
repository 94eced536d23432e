"""Transport, serializer and RPC server set-up (oslo.messaging).

Every transport allows ``scheduler.exception`` as a remote exception
module, so callers catch ``scheduler.exception.NoValidHost`` itself.
``EMBEDDED_TRANSPORT_URL`` is the in-process default of the simulator and
of unit tests: the rabbit driver over kombu's in-memory transport. It only
reaches servers of the same process.

``broker_urls(conf)`` are the kombu URLs of the broker hosts of
``transport_url``, built as the workers' rabbit driver builds them: the
start-up check connects to exactly those. oslo.messaging reads a
percent-encoded user name or password (``rabbit://u:p%40ss%2Fw@h/``) but
its rabbit driver quotes it back with ``/`` left bare, which kombu then
reads as the end of the host (``ValueError: Port could not be cast``);
``get_transport`` makes the driver quote every character instead.

Stopping a worker loses no call. ``Servers.stop`` has every server
cancel its consumers on the broker (``scheduler.rpc.consumer_loop``),
and a message read after that is left unacknowledged: the broker gives
it to another worker when the channel closes. Cancelling first also
keeps the broker's cancel notice for the deleted fanout queue
(``Received method (60, 30) during closing channel``) out of the log.

With the rabbit driver (RabbitMQ, or kombu's in-memory transport) the
servers are ``scheduler.rpc.late_ack``'s, which acknowledge a message
once it was answered; with any other driver they are oslo.messaging's
``RPCServer``, which acknowledges on arrival (a warning says so).
"""

import threading
from urllib.parse import quote

import oslo_messaging
from oslo_messaging._drivers import impl_rabbit
from oslo_messaging.rpc import server as rpc_server
from oslo_log import log as logging
from oslo_utils import netutils

from scheduler import conf as sched_conf
from scheduler.rpc import consumer_loop
from scheduler.rpc import inbound
from scheduler import objects
from scheduler.rpc import late_ack
from scheduler.rpc import memory_transport
from scheduler.rpc import report_batches

LOG = logging.getLogger(__name__)

ALLOWED_EXMODS = ['scheduler.exception']
# kombu's in-memory transport, polled rather than spun (memory_transport)
EMBEDDED_TRANSPORT_URL = 'kombu+%s:////' % memory_transport.ALIAS


def get_transport(conf, url=None):
    sched_conf.messaging.register_opts(conf)
    memory_transport.register()
    impl_rabbit.Connection._transform_transport_url = _kombu_url
    return oslo_messaging.get_rpc_transport(
        conf, url=url, allowed_remote_exmods=ALLOWED_EXMODS)


def _kombu_url(connection, url, host, default_username='',
               default_password='', default_hostname=''):
    """The kombu URL of one host of transport URL ``url`` (the rabbit
    driver's ``Connection._transform_transport_url``, fully quoted)."""
    transport = url.transport.replace('kombu+', '').replace('rabbit', 'amqp')
    return '%s://%s:%s@%s:%s/%s' % (
        transport, quote(host.username or default_username, safe=''),
        quote(host.password or default_password, safe=''),
        netutils.escape_ipv6(host.hostname) or default_hostname,
        host.port or 5672, url.virtual_host or '')


def broker_urls(conf):
    """The kombu URL of every broker host of ``[DEFAULT] transport_url``
    (module docstring); [] for a transport that is not AMQP over the
    network (the in-memory one, another driver)."""
    sched_conf.messaging.register_opts(conf)
    url = oslo_messaging.TransportURL.parse(conf, conf.transport_url)
    if url.transport not in ('rabbit', 'amqp'):
        return []
    # the driver's defaults for a host it was given without these
    return [_kombu_url(None, url, host, 'guest', 'guest', 'localhost')
            for host in url.hosts or [oslo_messaging.TransportHost('')]]


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
        """Cancel every consumer: from now on the broker gives this
        worker's messages to the others (module docstring)."""
        for server in self.servers:
            server.stop()

    def wait(self):
        """Wait for every server's in-flight messages, all at once: each
        server's wait ends with its listener's last poll (up to a second
        on an idle connection), which need not be waited out in turn."""
        waits = [threading.Thread(target=server.wait, daemon=True)
                 for server in self.servers]
        for thread in waits:
            thread.start()
        for thread in waits:
            thread.join()


#: what a worker serves: both topics, decisions only, reports only
SERVES_ALL = 'all'
SERVES_DECISIONS = 'decisions'
SERVES_REPORTS = 'reports'


def get_server(conf, transport, endpoints, serves=SERVES_ALL,
               release_claims=None):
    """The worker's RPC servers (threading executor): on both topics, or
    on one of them (``serves``, see ``[DEFAULT] report_workers``).

    The server name is ``[DEFAULT] host``; calls without a server go to
    whichever worker of any scheduler takes them from the shared queue.
    Every endpoint method is served on both topics. The report topic's
    server acknowledges a cast only once its endpoint returned
    (``scheduler.rpc.late_ack``), or once its batch's reports committed
    (``scheduler.rpc.report_batches``), the decision topic's a call once
    it was answered. ``release_claims`` (called with the claims of a call
    whose reply went out after its caller stopped waiting) gives such
    claims back at once (``late_ack.replied_too_late``); without it they
    wait for the sweep of unconfirmed claims.
    """
    report_topic = sched_conf.scheduler.report_topic(conf)
    sched_conf.limits.register_opts(conf)
    inbound.install(conf.limits.max_message_bytes)
    servers = []
    if serves in (SERVES_ALL, SERVES_DECISIONS):
        servers.append(_server(conf, transport, conf.scheduler.topic,
                               # late_ack: acknowledged once answered
                               endpoints, late_ack.CallServer,
                               release_claims=release_claims))
    if serves in (SERVES_ALL, SERVES_REPORTS):
        # in batches with the rabbit driver, one at a time otherwise
        server_cls, extra = report_batches.server_class(conf, transport,
                                                        endpoints)
        servers.append(_server(conf, transport, report_topic, endpoints,
                               server_cls, **extra))
    return Servers(servers)


def _server(conf, transport, topic, endpoints, server_cls, **extra):
    # our dispatcher: bad input and database outages become answers; it is
    # imported here because it needs oslo.db, which clients must not load
    from scheduler.rpc import dispatcher
    return server(transport, oslo_messaging.Target(
        topic=topic, server=conf.host), dispatcher.SchedulerDispatcher(
            endpoints, get_serializer(), conf.limits, conf.host),
        server_cls, **extra)


def server(transport, target, dispatcher, server_cls, **extra):
    """A ``server_cls`` (``scheduler.rpc.late_ack``) with the rabbit
    driver; oslo.messaging's ``RPCServer`` with any other, which
    acknowledges each message on arrival (module docstring)."""
    if consumer_loop.supports(transport):
        return server_cls(transport, target, dispatcher, **extra)
    LOG.warning('Transport driver %s: messages on topic %s are '
                'acknowledged before they are handled',
                type(transport._driver).__name__, target.topic)
    return rpc_server.RPCServer(transport, target, dispatcher,
                                executor='threading')

