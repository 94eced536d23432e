"""The broker a server reads from: kombu connections, and the exchanges and
queues oslo.messaging declares for an RPC target.

``Broker(conf)`` reads ``[DEFAULT] transport_url`` (oslo.messaging's
public ``TransportURL``) and the ``[oslo_messaging_rabbit]`` options that
oslo.messaging registers, and gives:

* ``connect()``: a kombu ``Connection`` (not connected yet) to every
  host of the URL in turn (kombu's failover, in
  ``kombu_failover_strategy`` order, the hosts shuffled as
  oslo.messaging shuffles them), with the driver's TLS options,
  heartbeat, login method and client properties. A user name or
  password is percent-encoded in full, so a password with ``/`` in it
  reaches the broker as written. A host that did not confirm a publish
  in time (``unconfirmed``: a node cut off from its cluster) comes last
  for ``AVOID_FOR`` seconds; publishers wait for confirms through
  ``scheduler.transport.confirms``, ``confirm_wait`` seconds at most;
* ``queues(target)``: the queues a server of ``target`` consumes, with
  the names, types, durability and arguments oslo.messaging's rabbit
  driver gives them (``rabbit_quorum_queue``,
  ``rabbit_transient_quorum_queue``, ``rabbit_stream_fanout``,
  ``rabbit_ha_queues``, ``amqp_durable_queues``, ``amqp_auto_delete``,
  ``rabbit_transient_queues_ttl``): an oslo.messaging server or client of
  the same target declares the same queue with the same arguments, and
  neither side's declaration fails (``PRECONDITION_FAILED``).
  ``tests/functional/test_transport_contract.py`` holds the two to it.

``EMBEDDED_URL`` (kombu's in-memory transport under the rabbit driver;
``scheduler.transport.memory``) reaches servers of the same process only.
"""

import os
import random
import ssl
import sys
import threading
import time
import uuid
from urllib.parse import quote

import kombu
import oslo_messaging
from oslo_log import log as logging
from oslo_utils import netutils

from scheduler.conf import messaging as messaging_conf
from scheduler.transport import confirms
from scheduler.transport import memory

LOG = logging.getLogger(__name__)

EMBEDDED_URL = 'kombu+%s:////' % memory.ALIAS
#: oslo.messaging's transports that are kombu's (``kombu+<name>``: any
#: kombu transport, for tests and the embedded default)
RABBIT = 'rabbit'
KOMBU_PREFIX = 'kombu+'
#: ``[oslo_messaging_rabbit] ssl_version`` -> the ``ssl`` module's name
SSL_VERSIONS = {'tlsv1': 'PROTOCOL_TLSv1', 'tlsv1_1': 'PROTOCOL_TLSv1_1',
                'tlsv1_2': 'PROTOCOL_TLSv1_2', 'sslv23': 'PROTOCOL_SSLv23',
                'sslv3': 'PROTOCOL_SSLv3'}
#: seconds a host that did not confirm a publish in time is tried last
#: (a node cut off from its cluster pauses within 1.25 net_ticktime, and
#: once the partition heals it needs a while to resume)
AVOID_FOR = 120.0


class BrokerConfigError(ValueError):
    """Options that no broker would accept together."""


def is_kombu_url(conf, url=None):
    """Is the transport ``url`` (``[DEFAULT] transport_url``) one this
    module serves: RabbitMQ (``rabbit://``) or a kombu transport
    (``kombu+memory://``)?"""
    messaging_conf.register_opts(conf)
    parsed = oslo_messaging.TransportURL.parse(conf, url or
                                               conf.transport_url)
    return parsed.transport == RABBIT or parsed.transport.startswith(
        KOMBU_PREFIX)


def _option(group, name, default):
    """An option of ``[oslo_messaging_rabbit]``, or ``default`` where the
    installed oslo.messaging has no such option (it then declares its
    queues as if it were off)."""
    try:
        return getattr(group, name)
    except (AttributeError, KeyError):
        return default


class Broker:
    """See the module docstring."""

    def __init__(self, conf, url=None):
        messaging_conf.register_opts(conf)
        memory.register()
        self.conf = conf
        self.rabbit = conf.oslo_messaging_rabbit
        self.url = oslo_messaging.TransportURL.parse(
            conf, url or conf.transport_url)
        if not is_kombu_url(conf, str(self.url)):
            raise BrokerConfigError(
                'transport_url %s://...: this server speaks to RabbitMQ '
                '(rabbit://) or a kombu transport (kombu+memory://)'
                % self.url.transport)
        rabbit = self.rabbit
        self.quorum = rabbit.rabbit_quorum_queue
        self.transient_quorum = _option(
            rabbit, 'rabbit_transient_quorum_queue', False)
        self.stream_fanout = _option(rabbit, 'rabbit_stream_fanout', False)
        if rabbit.rabbit_ha_queues and (self.quorum or
                                        self.transient_quorum):
            raise BrokerConfigError(
                '[oslo_messaging_rabbit] rabbit_ha_queues and a quorum '
                'queue option are both on: a queue is either mirrored or '
                'a quorum queue')
        if self.stream_fanout and not self.transient_quorum:
            raise BrokerConfigError(
                '[oslo_messaging_rabbit] rabbit_stream_fanout needs '
                'rabbit_transient_quorum_queue')
        #: the driver declares durable queues and exchanges with quorum
        #: queues on, whatever amqp_durable_queues says
        self.durable = rabbit.amqp_durable_queues or self.quorum
        self.in_memory = not self.url.hosts and \
            self.url.transport.startswith(KOMBU_PREFIX)
        self._avoid_lock = threading.Lock()
        self._avoid = {}        # host:port -> monotonic time to forget it

    # -- connections -------------------------------------------------------

    def kombu_urls(self):
        """The kombu URL of each broker host ([] for a transport without
        hosts, the in-memory one)."""
        return [url for _, url in self._hosts_and_urls()]

    def _hosts_and_urls(self):
        """``(host:port, kombu URL)`` of each broker host, ``host:port``
        as kombu's ``Connection.host`` names it."""
        if self.in_memory:
            return []
        hosts = self.url.hosts or [oslo_messaging.TransportHost('')]
        scheme = self.url.transport.replace(KOMBU_PREFIX, '').replace(
            RABBIT, 'amqp')
        return [(_host_port(host), '%s://%s:%s@%s/%s' % (
            scheme, quote(host.username or 'guest', safe=''),
            quote(host.password or 'guest', safe=''), _host_port(host),
            self.url.virtual_host or ''))
            for host in hosts]

    def unconfirmed(self, connection):
        """``connection`` (a kombu ``Connection``) got no confirm in
        time: its host (``host:port``) comes last for ``AVOID_FOR``
        seconds (a transport without hosts has none to avoid)."""
        if self.in_memory:
            return
        host = connection.host
        with self._avoid_lock:
            known = host in self._avoid
            self._avoid[host] = time.monotonic() + AVOID_FOR
        if not known:
            LOG.warning('RabbitMQ node %s did not confirm a message within '
                        '%.1f s (cut off from the rest of its cluster?): '
                        'publishing through another node, and trying this '
                        'one last for %.0f s', host, self.confirm_wait,
                        AVOID_FOR)

    def _in_order(self, hosts_and_urls):
        """The URLs of ``(host:port, URL)`` pairs shuffled, the hosts
        that did not confirm in time last."""
        pairs = list(hosts_and_urls)
        random.shuffle(pairs)
        now = time.monotonic()
        with self._avoid_lock:
            for host, until in list(self._avoid.items()):
                if until <= now:
                    del self._avoid[host]
            avoided = set(self._avoid)
        return [url for host, url in sorted(
            pairs, key=lambda pair: pair[0] in avoided)]

    def connect(self, name='scheduler'):
        """A kombu connection to the broker (module docstring); not
        connected until first used or ``ensure_connection``."""
        if self.in_memory:
            transport = self.url.transport[len(KOMBU_PREFIX):]
            return kombu.Connection('%s://%s' % (
                transport, self.url.virtual_host or ''))
        urls = self._in_order(self._hosts_and_urls())
        rabbit = self.rabbit
        return kombu.Connection(
            ';'.join(urls), ssl=self.ssl_options(),
            login_method=rabbit.rabbit_login_method,
            heartbeat=rabbit.heartbeat_timeout_threshold,
            failover_strategy=rabbit.kombu_failover_strategy,
            transport_options={
                'client_properties': {
                    'capabilities': {
                        'authentication_failure_close': True,
                        'connection.blocked': True,
                        'consumer_cancel_notify': True},
                    'connection_name': '%s:%d:%s:%s' % (
                        os.path.basename(sys.argv[0]), os.getpid(), name,
                        uuid.uuid4())},
            })

    def ssl_options(self, hostname=None):
        """kombu's ``ssl`` argument from the driver's TLS options: False
        (no TLS), True (TLS with the defaults) or the options. As in
        oslo.messaging, a CA file turns on certificate and host name
        verification (of ``hostname``, or of the URL's one host), and
        ``ssl = true`` without one encrypts only."""
        rabbit = self.rabbit
        if not rabbit.ssl:
            return False
        options = {}
        if rabbit.ssl_version:
            name = SSL_VERSIONS.get(rabbit.ssl_version.lower(), '')
            try:
                options['ssl_version'] = getattr(ssl, name)
            except AttributeError:
                raise BrokerConfigError(
                    '[oslo_messaging_rabbit] ssl_version %r: not one of %s '
                    'that this Python has' % (rabbit.ssl_version,
                                              ', '.join(SSL_VERSIONS)))
        if rabbit.ssl_key_file:
            options['keyfile'] = rabbit.ssl_key_file
        if rabbit.ssl_cert_file:
            options['certfile'] = rabbit.ssl_cert_file
        if rabbit.ssl_ca_file:
            options['ca_certs'] = rabbit.ssl_ca_file
            options['cert_reqs'] = ssl.CERT_REQUIRED
            if hostname is None and len(self.url.hosts) == 1:
                hostname = self.url.hosts[0].hostname
            if hostname is not None:
                options['server_hostname'] = hostname
        return options or True

    # -- what a server consumes --------------------------------------------

    def exchange_name(self, target):
        return target.exchange or self.conf.control_exchange

    def queue_arguments(self, quorum, ttl=0, stream=False):
        """The ``x-`` arguments the driver declares a queue with."""
        rabbit = self.rabbit
        if stream:
            args = {'x-queue-type': 'stream'}
            if ttl > 0:
                args['x-max-age'] = '%ds' % ttl
            return args
        args = {}
        if rabbit.rabbit_ha_queues:
            args['x-ha-policy'] = 'all'
        if quorum:
            args['x-queue-type'] = 'quorum'
            for option, argument in (
                    ('rabbit_quorum_delivery_limit', 'x-delivery-limit'),
                    ('rabbit_quorum_max_memory_length',
                     'x-max-in-memory-length'),
                    ('rabbit_quorum_max_memory_bytes',
                     'x-max-in-memory-bytes')):
                value = _option(rabbit, option, 0)
                if value:
                    args[argument] = value
        if ttl > 0:
            args['x-expires'] = ttl * 1000
        return args

    def _consumer_arguments(self):
        if _option(self.rabbit, 'enable_cancel_on_failover', False):
            return {'x-cancel-on-ha-failover': True}
        return None

    def topic_queue(self, exchange_name, topic):
        """The queue of ``topic`` (or ``topic.server``) on the target's
        topic exchange."""
        auto_delete = self.rabbit.amqp_auto_delete
        exchange = kombu.Exchange(exchange_name, type='topic',
                                  durable=self.durable,
                                  auto_delete=auto_delete)
        return kombu.Queue(
            topic, exchange, routing_key=topic, durable=self.durable,
            auto_delete=auto_delete,
            queue_arguments=self.queue_arguments(self.quorum),
            consumer_arguments=self._consumer_arguments())

    def fanout_queue(self, topic, offset='last'):
        """This server's queue on ``topic``'s fanout exchange: one of its
        own (``<topic>_fanout_<uuid>``), or the shared stream
        ``<topic>_fanout`` read from ``offset``."""
        durable = self.transient_quorum or self.stream_fanout
        exchange = kombu.Exchange('%s_fanout' % topic, type='fanout',
                                  durable=durable, auto_delete=True)
        ttl = self.rabbit.rabbit_transient_queues_ttl
        if self.stream_fanout:
            name = '%s_fanout' % topic
            consumer_arguments = {'x-stream-offset': offset}
        else:
            name = '%s_fanout_%s' % (topic, uuid.uuid4().hex)
            consumer_arguments = self._consumer_arguments()
        return kombu.Queue(
            name, exchange, routing_key=topic, durable=durable,
            auto_delete=False,
            queue_arguments=self.queue_arguments(
                self.transient_quorum, ttl, self.stream_fanout),
            consumer_arguments=consumer_arguments)

    def queues(self, target):
        """The queues a server of ``target`` consumes: its topic's, its
        own (``topic.server``, with a server name) and its fanout
        queue."""
        exchange = self.exchange_name(target)
        queues = [self.topic_queue(exchange, target.topic)]
        if target.server:
            queues.append(self.topic_queue(
                exchange, '%s.%s' % (target.topic, target.server)))
        queues.append(self.fanout_queue(target.topic))
        return queues

    # -- publishing --------------------------------------------------------

    @property
    def mandatory_replies(self):
        """Replies are published mandatory: a reply queue that is gone
        is an error, not a silent drop (``direct_mandatory_flag``)."""
        return _option(self.rabbit, 'direct_mandatory_flag', True)

    @property
    def compression(self):
        return self.rabbit.kombu_compression

    def retry_intervals(self, attempt):
        """Seconds before reconnection ``attempt`` (0, 1, ...) after every
        host failed: ``rabbit_retry_interval``, growing by
        ``rabbit_retry_backoff``, at most ``rabbit_interval_max``."""
        rabbit = self.rabbit
        return min(rabbit.rabbit_retry_interval +
                   attempt * rabbit.rabbit_retry_backoff,
                   rabbit.rabbit_interval_max)

    @property
    def heartbeat_every(self):
        """Seconds between two heartbeat checks of a connection (0: the
        connection has none)."""
        rabbit = self.rabbit
        if self.in_memory or rabbit.heartbeat_timeout_threshold <= 0:
            return 0.0
        return (float(rabbit.heartbeat_timeout_threshold) /
                float(rabbit.heartbeat_rate) / 2.0)

    @property
    def heartbeat_rate(self):
        return self.rabbit.heartbeat_rate

    #: seconds a publish may wait when heartbeats are off
    PUBLISH_TIMEOUT = 30.0

    @property
    def publish_timeout(self):
        """Seconds a publish may take, its write and the broker's
        confirm together: two heartbeat timeouts, after which the
        broker counts as gone anyway (``PUBLISH_TIMEOUT`` without
        heartbeats; None in memory). A publish blocked on a connection
        that died silently (a host cut off the network) would otherwise
        hold the loop's thread, and with it the heartbeats that notice
        the loss, until TCP gave up: the loop served again 22 s after
        the link came back (tests/functional/test_host_cut.py)."""
        if self.in_memory:
            return None
        threshold = self.rabbit.heartbeat_timeout_threshold
        return 2.0 * threshold if threshold > 0 else self.PUBLISH_TIMEOUT

    @property
    def confirm_wait(self):
        """Seconds a publish waits for the broker's confirm
        (``scheduler.transport.confirms``): ``CONFIRM_WAIT``, or less
        when ``publish_timeout`` is shorter."""
        timeout = self.publish_timeout
        if timeout is None:
            return confirms.CONFIRM_WAIT
        return min(confirms.CONFIRM_WAIT, timeout)

    @property
    def missing_reply_queue_wait(self):
        """Seconds a reply whose queue is missing is tried again
        (``kombu_missing_consumer_retry_timeout``)."""
        return self.rabbit.kombu_missing_consumer_retry_timeout


def _host_port(host):
    """``host:port`` of an oslo.messaging ``TransportHost``, as kombu's
    ``Connection.host`` names it."""
    return '%s:%s' % (netutils.escape_ipv6(host.hostname) or 'localhost',
                      host.port or 5672)
