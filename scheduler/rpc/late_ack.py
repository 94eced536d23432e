"""RPC servers that acknowledge a message once it was answered.

oslo.messaging's rabbit driver acknowledges every RPC message in its
consumer callback, as soon as the message reaches the worker and before
any endpoint runs (``RpcAMQPListener.__call__``, oslo.messaging bug
1695746); an endpoint that raises cannot make the broker redeliver, and a
worker that dies (SIGKILL, OOM) loses every message it had read: its
callers wait for their call monitor, its reports are gone.

The servers here read their messages through a ``ConsumerLoop``
(``scheduler.transport.consumer_loop``: a kombu connection driven by one
thread, in oslo.messaging's wire format) and hand each to a thread of
their own, and acknowledge it after the answer:

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
  (``release_claims``: the server passes each call a
  ``scheduler.model.call.Call``, to which the claim adds what it
  writes).
* a **cast** is acknowledged once its endpoint returned. An endpoint
  that raises one of the server's ``requeue_once`` exceptions gets its
  message **requeued once**; a message the broker already redelivered
  (after a requeue or a worker's death) is acknowledged and dropped with
  an error line instead, so a message that cannot be handled is never
  redelivered forever. Any other exception is logged and the message
  acknowledged, as oslo.messaging does.
* a message read after the server stopped consuming is left
  unacknowledged: the broker gives it to another worker when the channel
  closes (``stop``, then ``wait``).
* the broker pushes a server at most as many unacknowledged messages as
  it has threads (the channel's prefetch): a worker holds no backlog
  that would wait on it, and that it would take down with it.

A reply leaves through the loop's own connection (published by its
thread, confirmed by the broker, before the message's acknowledgement);
if that fails (the connection is being re-established, the caller's
reply queue is missing, the broker did not confirm it within
``Broker.confirm_wait`` seconds: a RabbitMQ node cut off from its
cluster, ``scheduler.transport.confirms``), it is sent over a
connection of its own, to the other nodes of ``transport_url`` first,
retried while the queue is missing for up to
``[oslo_messaging_rabbit] kombu_missing_consumer_retry_timeout``
seconds, as oslo.messaging retries a reply. A reply that reaches its
caller twice that way is harmless: the caller takes the first.

``ReportServer`` is the report topic's: a report is acknowledged only
once ``update_resource_stats`` has seen it committed, and
``ReportNotStored`` requeues it once. ``scheduler.rpc.report_batches.
ReportBatchServer`` serves the topic in batches. ``CallServer`` is the
decision topic's.

Only RabbitMQ and kombu's transports (the in-memory one of the
simulator and the unit tests) are served this way; with another
oslo.messaging driver, ``scheduler.rpc.messaging`` uses a plain
``RPCServer``, which acknowledges on arrival, and says so at start-up.
"""

import collections
import datetime
import sys
import threading
import time
from concurrent import futures

from oslo_log import log as logging
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_utils import timeutils

from scheduler import exception
from scheduler.model import call as model_call
from scheduler.objects import base as objects_base
from scheduler.transport import consumer_loop
from scheduler.transport import wire

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
# seconds a reply waits for the loop's thread before it is sent over a
# pooled connection instead (the loop is re-establishing its connection)
REPLY_WAIT = 5.0
# seconds ``stop`` waits for the broker to cancel the consumers
STOP_WAIT = 5.0
# seconds between two tries of a reply whose queue is missing
REPLY_RETRY = 0.25


class Inbound:
    """One message a server took, as oslo.messaging's dispatcher reads
    an incoming message: ``ctxt``, ``message`` (the method, its version
    and arguments; a ``consumer_loop.Delivery``), ``msg_id`` and
    ``reply_q`` (a call's), ``client_timeout`` (the caller's call-monitor
    timeout), ``reply`` and ``heartbeat``. ``received`` and ``replied``
    are this worker's monotonic clock when it arrived and when its
    reply was out (None before)."""

    __slots__ = ('server', 'message', 'ctxt', 'msg_id', 'reply_q',
                 'client_timeout', 'unique_id', 'received', 'replied',
                 'requeued', 'settled')

    def __init__(self, server, message):
        self.server = server
        self.message = message
        envelope = wire.Envelope(message)
        self.ctxt = envelope.ctxt
        self.msg_id = envelope.msg_id
        self.reply_q = envelope.reply_q
        self.client_timeout = envelope.client_timeout
        self.unique_id = envelope.unique_id
        self.received = time.monotonic()
        self.replied = None
        self.requeued = False
        self.settled = False

    def reply(self, reply=None, failure=None):
        if self.msg_id:
            self.server.send_reply(self, reply, failure)
            self.replied = time.monotonic()

    def heartbeat(self):
        self.server.send_reply(self, None, None, ending=False)

    def acknowledge(self):
        """Nothing: ``settle`` acknowledges, once the message is
        handled."""

    def settle(self):
        """Acknowledge, once (a call's reply may have done it)."""
        if not self.settled:
            self.settled = True
            self.server.loop.settle(self.message)

    def requeue(self):
        self.requeued = self.settled = True
        self.server.loop.settle(self.message, requeue=True)


def _raw(message):
    return getattr(message.message, 'raw', None)


def _redelivered(message):
    info = getattr(_raw(message), 'delivery_info', None) or {}
    return bool(info.get('redelivered'))


def _expiration(message):
    """The caller's RPC timeout in seconds (the message's AMQP
    ``expiration``), or None."""
    properties = getattr(_raw(message), 'properties', None) or {}
    try:
        return float(properties['expiration']) / 1000
    except (KeyError, TypeError, ValueError):
        return None


def deadline(message):
    """When the caller of this call surely stops waiting, on this
    worker's monotonic clock: its arrival plus the caller's RPC timeout
    (the caller's timer started before it arrived), the point after
    which a reply is too late (``replied_too_late``); None for a cast or
    a call without an expiration. No claim is written for a call past
    it (``scheduler.db.claims``): a worker cut off the network, or
    stalled, that takes a call up again long after another worker
    answered it, must not take that answer's claims over and then give
    them back as a late reply's."""
    timeout = _expiration(message)
    received = getattr(message, 'received', None)
    if timeout is None or received is None or not getattr(
            message, 'msg_id', None):
        return None
    return received + timeout


def replied_too_late(message):
    """True if the reply to this call went out when its caller had
    surely stopped waiting: longer after the call arrived than the
    caller's RPC timeout (the message's ``expiration``; the caller's
    timer starts before the message can arrive), with ``REPLY_MARGIN``
    to spare for a reply written to the socket before it is out. Both
    times are this worker's monotonic clock: no clock skew enters. A
    call without an expiration, or not answered, is never too late."""
    timeout = _expiration(message)
    replied = getattr(message, 'replied', None)
    if timeout is None or replied is None:
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
        sent = objects_base.read_sent_at(sent)
        waits = float(expiration) / 1000 + float(
            message.client_timeout or 0)
    except (TypeError, ValueError):
        return False
    age = (now or timeutils.utcnow()) - sent
    return age > datetime.timedelta(seconds=waits)


class LateAckServer:
    """A server acknowledging a message once it was answered (module
    docstring), with ``start(override_pool_size=...)`` threads or
    ``[DEFAULT] executor_thread_pool_size``; ``stop`` then ``wait``."""

    #: threads, and unacknowledged messages the broker may push (None:
    #: ``executor_thread_pool_size``)
    pool_size = None
    #: cast exceptions whose message is requeued once
    requeue_once = ()

    def __init__(self, broker, target, dispatcher, release_claims=None):
        self.broker = broker
        self.target = target
        self.dispatcher = dispatcher
        self.conf = broker.conf
        #: called with the ``scheduler.model.call.Written`` claims of a call
        #: answered too late (None: such claims wait for the sweep)
        self.release_claims = release_claims
        self.loop = None
        self.threads = None
        self._pool = None
        self._requeued = collections.OrderedDict()
        self._requeued_lock = threading.Lock()

    # -- life cycle --------------------------------------------------------

    def start(self, override_pool_size=None):
        self.threads = (override_pool_size or self.pool_size
                        or self.conf.executor_thread_pool_size)
        self._pool = futures.ThreadPoolExecutor(
            self.threads, thread_name_prefix='rpc-%s' % self.target.topic)
        self.loop = consumer_loop.ConsumerLoop(
            self.broker, self.target, self._received,
            self._tick, name='consumer-%s' % self.target.topic)
        self.loop.bound_prefetch(self.prefetch())
        self.loop.start()

    def prefetch(self):
        """The unacknowledged messages the broker may push: one per
        thread."""
        return self.threads

    def stop(self):
        """Take no more messages: the broker gives the rest to others."""
        if self.loop is not None:
            self.loop.stop_consuming(STOP_WAIT)

    def wait(self):
        """Let the messages taken finish, send their replies and
        acknowledgements, and close the connection."""
        if self.loop is None:
            return
        self._pool.shutdown(wait=True)
        self.loop.close()

    # -- messages ----------------------------------------------------------

    def _received(self, message):
        """A message read by the loop (in its thread)."""
        self._pool.submit(self._process, Inbound(self, message))

    def _tick(self):
        return None

    def _process(self, message):
        try:
            if not message.msg_id:
                self._handle_cast(message)
            elif caller_gave_up(message):
                LOG.warning('Call %s not served: its caller gave up '
                            'before a worker took it',
                            message.message.get('method'))
            else:
                self._serve_call(message)
        except Exception:
            LOG.exception('Exception during message handling')
        finally:
            if not message.requeued:
                message.settle()

    def _serve_call(self, message):
        """Dispatch and answer a call; if the answer went out after its
        caller stopped waiting (``replied_too_late``), the claims the
        call wrote are given back (``release_claims``), since nobody
        will build on them."""
        if _redelivered(message):
            LOG.info('Call %s delivered again: the worker that took it '
                     'first stopped or died before answering',
                     message.message.get('method'))
        call = model_call.Call(deadline=deadline(message),
                               text_length=message.message.text_length)
        self._answer(message, call)
        written = call.written
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

    def _answer(self, message, call):
        """Dispatch a call and reply with its result or its failure, as
        oslo.messaging's ``RPCServer`` does."""
        failure = None
        try:
            result = self.dispatcher.dispatch(message, call)
        except rpc_dispatcher.ExpectedException as exc:
            failure = exc.exc_info
            LOG.debug('Expected exception during message handling (%s)',
                      exc)
        except Exception:
            failure = sys.exc_info()
            LOG.exception('Exception during message handling')
        try:
            if failure is None:
                message.reply(result)
            else:
                message.reply(failure=failure)
        except Exception:
            LOG.exception('Can not send reply for message')
        finally:
            del failure

    def _handle_cast(self, message):
        try:
            self.dispatcher.dispatch(message, model_call.Call(
                text_length=message.message.text_length))
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

    # -- replies -----------------------------------------------------------

    def send_reply(self, message, reply, failure, ending=True):
        """Send a call's reply (``ending``) or a call-monitor heartbeat
        (module docstring: through the loop, else a connection of its
        own). A reply published by the loop acknowledges its message in
        the same turn of the loop, right after it."""
        if failure:
            failure = wire.remote_failure(failure)
        body = wire.reply(message.msg_id, reply, failure, ending)
        settle = ending and not message.settled

        def publish():
            self.loop.publish(body, message.reply_q)
            if settle:
                self.loop.settle_here(message.message)
        try:
            self.loop.call(publish, timeout=REPLY_WAIT)
            message.settled = message.settled or settle
        except Exception as exc:
            LOG.debug('Reply to %s over a connection of its own: %s',
                      message.msg_id, exc)
            self._send_alone(body, message.reply_q)

    def _send_alone(self, body, reply_q):
        """A reply over a connection of its own, tried again while its
        queue is missing (a broker failing over) or the broker cannot be
        reached, for up to ``kombu_missing_consumer_retry_timeout``
        seconds."""
        deadline = time.monotonic() + self.broker.missing_reply_queue_wait
        while True:
            try:
                consumer_loop.publish_once(self.broker, body, reply_q)
                return
            except Exception as exc:
                if time.monotonic() >= deadline:
                    LOG.error('Reply to queue %s abandoned: %s', reply_q,
                              exc)
                    return
                time.sleep(REPLY_RETRY)


class CallServer(LateAckServer):
    """The decision topic's server: select_destinations and the pushed
    data."""


class ReportServer(LateAckServer):
    """The report topic's server: a report that was not stored
    (``ReportNotStored``) is delivered once more."""

    pool_size = REPORT_THREADS
    requeue_once = (exception.ReportNotStored,)
