"""RPC servers that acknowledge a message once it was answered.

oslo.messaging's rabbit driver acknowledges every RPC message in its
consumer callback, as soon as the message reaches the worker and before
any endpoint runs (``RpcAMQPListener.__call__``, oslo.messaging bug
1695746); an endpoint that raises cannot make the broker redeliver, and a
worker that dies (SIGKILL, OOM) loses every message it had read: its
callers wait for their call monitor, its reports are gone.

``LateAckServer`` moves the acknowledgement after the answer:

* a **call** is acknowledged once its reply was sent. If the worker dies
  first, its channel closes and the broker hands the call, unchanged, to
  another worker, whose reply goes to the reply queue and ``msg_id``
  named in the message: the caller that still waits gets it, seconds
  after the death. The repeat is harmless: a request repeated with the
  same instance uuids gets the claims it already has
  (``scheduler.db.claims.held_claims``).
* a call its caller has given up on is not served (``caller_gave_up``):
  it is acknowledged and dropped, so no claim is written that nobody
  would ever build on. A call answered only after its caller surely
  stopped waiting (``replied_too_late``: the broker went away between
  the claim and the reply) gives back the claims it wrote
  (``release_claims``, with ``scheduler.db.claim_record``).
* a **cast** is acknowledged once its endpoint returned. An endpoint
  that raises one of the server's ``requeue_once`` exceptions gets its
  message **requeued once**; a message the broker already redelivered
  (after a requeue or a worker's death) is acknowledged and dropped with
  an error line instead, so a message that cannot be handled is never
  redelivered forever. Any other exception is logged and the message
  acknowledged, as oslo.messaging does.
* a message read after the server stopped polling is left
  unacknowledged: the broker gives it to another worker when the channel
  closes (``scheduler.rpc.messaging.Servers.stop``).
* the broker pushes a server at most as many unacknowledged messages as
  it has threads (the channel's prefetch): a worker holds no backlog
  that would wait on it, and that it would take down with it.

``ReportServer`` is the report topic's: a report is acknowledged only
once ``update_resource_stats`` has seen it committed, and
``ReportNotStored`` requeues it once. With the rabbit driver the topic is
served in batches by its subclass ``scheduler.rpc.report_batches.
ReportBatchServer`` (a server's ``batch``: what one poll gathers).
``CallServer`` is the decision topic's.

Only the rabbit driver (kombu, including the in-memory transport of the
unit tests) is adapted; with another driver a server behaves as a plain
``RPCServer`` and says so at start-up.
"""

import collections
import datetime
import threading
import time

from oslo_log import log as logging
from oslo_messaging._drivers import amqpdriver
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_messaging.rpc import server as rpc_server
from oslo_utils import timeutils

from scheduler import exception

LOG = logging.getLogger(__name__)

# a waiting report holds a thread but no CPU: enough threads that a batch
# gathers many reports while the previous one is written (group commit)
REPORT_THREADS = 64
# messages a server requeued, remembered by unique id: kombu's in-memory
# broker does not flag a requeued message as redelivered
REQUEUED_REMEMBERED = 10000
# seconds between a reply's last write and the latest it can reach its
# caller (``replied_too_late``)
REPLY_MARGIN = 2.0


class LateAckMessage(amqpdriver.NotificationAMQPIncomingMessage):
    """``acknowledge`` is a no-op, as for oslo.messaging's own RPC
    messages (``RPCServer`` calls it before dispatching); ``settle``
    acknowledges to the broker, from the consumer's thread. ``received``
    and ``replied`` are this worker's monotonic clock when the message
    arrived and when its reply was out (None before)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.received = time.monotonic()
        self.replied = None

    def reply(self, *args, **kwargs):
        try:
            return super().reply(*args, **kwargs)
        finally:
            self.replied = time.monotonic()

    def acknowledge(self):
        pass

    def settle(self):
        super().acknowledge()


class _LateAckListener(amqpdriver.RpcAMQPListener):
    """Hands messages over unacknowledged, and only while its server
    polls. No duplicate cache: a requeued message must be delivered
    again."""

    message_cls = LateAckMessage
    use_cache = False

    def __call__(self, message):
        if not self._shutdown.is_set():
            amqpdriver.AMQPListener.__call__(self, message)


def _raw(message):
    return getattr(message.message, '_raw_message', None)


def _redelivered(message):
    info = getattr(_raw(message), 'delivery_info', None) or {}
    return bool(info.get('redelivered'))


def replied_too_late(message):
    """True if the reply to this call went out when its caller had
    surely stopped waiting: longer after the call arrived than the
    caller's RPC timeout (the message's ``expiration``; the caller's
    timer starts before the message can arrive), with ``REPLY_MARGIN``
    to spare for a reply written to the socket before it is out. Both
    times are this worker's monotonic clock: no clock skew enters. A
    call without an expiration, or not answered, is never too late."""
    properties = getattr(_raw(message), 'properties', None) or {}
    replied = getattr(message, 'replied', None)
    try:
        timeout = float(properties['expiration']) / 1000
    except (KeyError, TypeError, ValueError):
        return False
    if replied is None:
        return False
    return replied - message.received > timeout + REPLY_MARGIN


def caller_gave_up(message, now=None):
    """True if the caller of this call no longer waits for it, as far as
    the message tells: it was sent (``sent_at`` in its context, the
    caller's clock) longer ago than the caller waits at most, its RPC
    timeout (the message's AMQP ``expiration``, which the broker also
    applies while the message is queued) plus its call-monitor timeout
    (``_timeout``: how long it waits for a first heartbeat). A message
    without these (a cast, an older client) is never stale. A caller
    whose send was held up longer than its RPC timeout (it retries its
    publish through a broker outage) finds its call refused this way and
    times out without a claim; it retries."""
    sent = (getattr(message, 'ctxt', None) or {}).get('sent_at')
    properties = getattr(_raw(message), 'properties', None) or {}
    expiration = properties.get('expiration')
    if not sent or not expiration:
        return False
    try:
        sent = timeutils.normalize_time(timeutils.parse_isotime(sent))
        waits = float(expiration) / 1000 + float(
            message.client_timeout or 0)
    except (TypeError, ValueError):
        return False
    age = (now or timeutils.utcnow()) - sent
    return age > datetime.timedelta(seconds=waits)


class LateAckServer(rpc_server.RPCServer):
    """An ``RPCServer`` acknowledging a message once it was answered
    (module docstring). Start it with ``start(override_pool_size=...)``
    or with ``[DEFAULT] executor_thread_pool_size`` threads."""

    #: threads, and unacknowledged messages the broker may push (None:
    #: ``executor_thread_pool_size``)
    pool_size = None
    #: cast exceptions whose message is requeued once
    requeue_once = ()
    #: what one poll gathers at most: (messages, seconds); one message
    #: for a server that handles each in a thread of its own
    batch = (1, None)

    def __init__(self, *args, release_claims=None, **kwargs):
        super().__init__(*args, **kwargs)
        #: called with the ``claim_record.Written`` claims of a call
        #: answered too late (None: such claims wait for the sweep)
        self.release_claims = release_claims
        self._requeued = collections.OrderedDict()
        self._requeued_lock = threading.Lock()

    def _create_listener(self):
        adapter = self.transport._listen(self._target, *self.batch)
        listener = getattr(adapter, '_poll_style_listener', None)
        if type(listener) is amqpdriver.RpcAMQPListener:
            listener.__class__ = _LateAckListener
            _bound_prefetch(listener, self.prefetch())
        else:
            LOG.warning('Transport driver %s: messages on topic %s are '
                        'acknowledged before they are handled',
                        type(listener).__name__,
                        getattr(self._target, 'topic', None))
        return adapter

    def prefetch(self):
        """The unacknowledged messages the broker may push: one per
        thread (``start()`` built the thread pool just before)."""
        return getattr(self._work_executor, '_max_workers',
                       self.conf.executor_thread_pool_size)

    def _process_incoming(self, incoming):
        message = incoming[0]
        if not isinstance(message, LateAckMessage):
            return super()._process_incoming(incoming)
        try:
            if not getattr(message, 'orig_msg_id', None):
                self._handle_cast(message)
            elif caller_gave_up(message):
                LOG.warning('Call %s not served: its caller gave up '
                            'before a worker took it',
                            message.message.get('method'))
            else:
                self._serve_call(incoming)
        finally:
            if not getattr(message, 'requeued', False):
                message.settle()

    def _serve_call(self, incoming):
        """Dispatch and answer a call; if the answer went out after its
        caller stopped waiting (``replied_too_late``), the claims the
        call wrote are given back (``release_claims``), since nobody
        will build on them."""
        # a server's module: clients import this one and load no db code
        from scheduler.db import claim_record
        message = incoming[0]
        if _redelivered(message):
            LOG.info('Call %s delivered again: the worker that took it '
                     'first stopped or died before answering',
                     message.message.get('method'))
        with claim_record.recording() as written:
            super()._process_incoming(incoming)
        if not written or self.release_claims is None or \
                not replied_too_late(message):
            return
        try:
            released = self.release_claims(written)
        except Exception as exc:
            # the sweep gives them back after the grace period instead
            LOG.warning('Claims of a late reply not released: %s', exc)
            return
        LOG.warning('Call %s answered %.1f s after it arrived, after its '
                    'caller stopped waiting: released %d claim row(s) of '
                    '%s', message.message.get('method'),
                    message.replied - message.received, released,
                    ', '.join(sorted({w.consumer_uuid for w in written})))

    def _handle_cast(self, message):
        try:
            self.dispatcher.dispatch(message)
        except self.requeue_once as exc:
            self.requeue_once_only(message, exc)
        except rpc_dispatcher.ExpectedException:
            # an answer, not a fault (a policy refusal): already logged
            # once where it was raised, as oslo.messaging treats it too
            LOG.debug('Expected exception during cast handling')
        except Exception:
            LOG.exception('Exception during message handling')

    def requeue_once_only(self, message, exc):
        """``message`` failed with ``exc``: requeued (its ``requeued``
        set) if never delivered before, else left to be acknowledged
        and dropped with an error line."""
        if self._first_delivery(message):
            LOG.warning('%s; the broker will deliver it again', exc)
            message.requeued = True
            message.requeue()
            return
        LOG.error('%s; dropped, as it was delivered twice', exc)

    def _first_delivery(self, message):
        """True (and remembered) if ``message`` was never delivered before."""
        if _redelivered(message):
            return False
        with self._requeued_lock:
            if message.unique_id in self._requeued:
                return False
            self._requeued[message.unique_id] = True
            if len(self._requeued) > REQUEUED_REMEMBERED:
                self._requeued.popitem(last=False)
        return True


def _bound_prefetch(listener, count):
    """At most ``count`` unacknowledged messages on the listener's
    channel, now and after every reconnection (the driver sets the QoS of
    each new channel from this attribute)."""
    rabbit = getattr(listener.conn, 'connection', None)
    if rabbit is None or not count:
        return
    rabbit.rabbit_qos_prefetch_count = count
    try:
        rabbit._set_qos(rabbit.channel)
    except Exception as exc:  # reconnecting: the new channel gets it
        LOG.debug('Prefetch not set yet: %s', exc)


class CallServer(LateAckServer):
    """The decision topic's server: select_destinations and the pushed
    data."""


class ReportServer(LateAckServer):
    """The report topic's server: a report that was not stored
    (``ReportNotStored``) is delivered once more."""

    pool_size = REPORT_THREADS
    requeue_once = (exception.ReportNotStored,)
