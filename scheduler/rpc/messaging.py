"""Transport, serializer and RPC server set-up.

Every transport allows ``scheduler.exception`` as a remote exception
module, so callers catch ``scheduler.exception.NoValidHost`` itself.
``EMBEDDED_TRANSPORT_URL`` is the in-process default of the simulator and
of unit tests: kombu's in-memory transport (``scheduler.transport.
memory``). It only reaches servers of the same process.

Clients (``get_transport``) use oslo.messaging's public API as it is:
nothing in the caller's process is patched. oslo.messaging's rabbit
driver quotes a user name or password back with ``/`` left bare, which
kombu then reads as the end of the host (``ValueError: Port could not
be cast``); ``get_transport`` refuses such a URL with a clear error (a
client cannot use it), while the servers, on ``scheduler.transport``,
quote every character and serve it.

The servers read and answer through ``scheduler.transport`` (kombu's
public API, oslo.messaging's wire format): ``scheduler.rpc.late_ack``'s,
which acknowledge a message once it was answered. With a transport that
is neither RabbitMQ nor kombu's they are oslo.messaging's
``RPCServer``, which acknowledges on arrival (a warning says so).

Stopping a worker loses no call. ``Servers.stop`` has every server
cancel its consumers on the broker (``scheduler.transport.
consumer_loop``), and a message read after that is left unacknowledged:
the broker gives it to another worker when the channel closes.
"""

import threading

import oslo_messaging
from oslo_messaging.rpc import server as rpc_server
from oslo_log import log as logging

from scheduler import conf as sched_conf
from scheduler.rpc import inbound
from scheduler import objects
from scheduler.rpc import late_ack
from scheduler.rpc import report_batches
from scheduler.transport import broker as transport_broker
from scheduler.transport import memory as transport_memory

LOG = logging.getLogger(__name__)

ALLOWED_EXMODS = ['scheduler.exception']
EMBEDDED_TRANSPORT_URL = transport_broker.EMBEDDED_URL


class UnusableTransportURL(ValueError):
    """A transport URL oslo.messaging's client cannot connect with."""


def get_transport(conf, url=None):
    """oslo.messaging's RPC transport for a client (module docstring)."""
    sched_conf.messaging.register_opts(conf)
    transport_memory.register()
    parsed = oslo_messaging.TransportURL.parse(conf, url or
                                               conf.transport_url)
    for number, host in enumerate(parsed.hosts, 1):
        for field in ('username', 'password'):
            if '/' in (getattr(host, field) or ''):
                raise UnusableTransportURL(
                    'transport_url: the %s of host %d has a "/" in it; '
                    'oslo.messaging\'s rabbit driver cannot connect with '
                    'it (the scheduler\'s servers can): give its client '
                    'credentials without "/"' % (field, number))
    return oslo_messaging.get_rpc_transport(
        conf, url=url, allowed_remote_exmods=ALLOWED_EXMODS)


def server_transport(conf):
    """What a worker's servers need of oslo.messaging: None when they
    read and answer through ``scheduler.transport`` (RabbitMQ, kombu's
    transports), else oslo.messaging's transport for its own
    ``RPCServer`` (module docstring)."""
    sched_conf.messaging.register_opts(conf)
    if transport_broker.is_kombu_url(conf):
        return None
    return get_transport(conf)


def broker_urls(conf):
    """The kombu URL of every broker host of ``[DEFAULT] transport_url``
    as the servers connect to them; [] for a transport that is not AMQP
    over the network (the in-memory one, another driver)."""
    sched_conf.messaging.register_opts(conf)
    if not transport_broker.is_kombu_url(conf):
        return []
    return transport_broker.Broker(conf).kombu_urls()


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
               release_claims=None, report_writer=None, recorder=None):
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
    wait for the sweep of unconfirmed claims. ``report_writer``: the
    endpoint's ``ReportWriter``, which the report topic's server writes
    batches of reports through (``report_batches``); without it, one
    report at a time through the endpoint. ``recorder``: the worker's
    ``DecisionRecorder``, which counts the RPC errors answered.
    """
    report_topic = sched_conf.scheduler.report_topic(conf)
    sched_conf.limits.register_opts(conf)
    inbound.install(conf.limits.max_message_bytes)
    servers = []
    if serves in (SERVES_ALL, SERVES_DECISIONS):
        servers.append(_server(conf, transport, conf.scheduler.topic,
                               # late_ack: acknowledged once answered
                               endpoints, late_ack.CallServer, recorder,
                               release_claims=release_claims))
    if serves in (SERVES_ALL, SERVES_REPORTS):
        # in batches with the rabbit driver, one at a time otherwise
        server_cls, extra = report_batches.server_class(conf,
                                                        report_writer)
        servers.append(_server(conf, transport, report_topic, endpoints,
                               server_cls, recorder, **extra))
    return Servers(servers)


def _server(conf, transport, topic, endpoints, server_cls, recorder,
            **extra):
    # our dispatcher: bad input and database outages become answers; it is
    # imported here because it needs oslo.db, which clients must not load
    from scheduler.edge import dispatcher
    return server(conf, transport, oslo_messaging.Target(
        topic=topic, server=conf.host), dispatcher.SchedulerDispatcher(
            endpoints, get_serializer(), conf.limits, conf.host,
            recorder=recorder),
        server_cls, **extra)


def server(conf, transport, target, dispatcher, server_cls, **extra):
    """A ``server_cls`` (``scheduler.rpc.late_ack``) on
    ``scheduler.transport`` for RabbitMQ or a kombu transport;
    oslo.messaging's ``RPCServer`` on ``transport`` with any other,
    which acknowledges each message on arrival (module docstring)."""
    if transport_broker.is_kombu_url(conf):
        return server_cls(transport_broker.Broker(conf), target,
                          dispatcher, **extra)
    LOG.warning('Transport %s: messages on topic %s are acknowledged '
                'before they are handled',
                oslo_messaging.TransportURL.parse(
                    conf, conf.transport_url).transport, target.topic)
    return rpc_server.RPCServer(transport, target, dispatcher,
                                executor='threading')
