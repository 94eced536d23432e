"""One thread that reads a server's messages from the broker and writes its
replies and acknowledgements, on kombu's public API.

oslo.messaging's RPC server reads each message through a poll loop that
wraps every wait in its connection's ``ensure`` and wakes up 1, 2, 4 ...
ms after each message to run the acknowledgements other threads asked
for; on this machine that loop cost a worker more CPU per call than the
call's own decision, and it acknowledges a call before it is handled
(doc/source/decisions/transport.rst). ``ConsumerLoop`` is a kombu
connection, consumer and producer driven by one thread:

* it consumes the queues oslo.messaging declares for the target
  (``scheduler.transport.broker``), with at most ``bound_prefetch``
  unacknowledged messages;
* it waits in ``poll`` on the connection's socket and on a pipe that
  other threads write to when they hand it work, so it wakes once per
  message or per hand-over and never on a timer while it has nothing to
  do (every ``IDLE_WAIT`` s at most);
* it reads the frames that arrived, decodes each message's body (JSON
  only, bounded by ``scheduler.rpc.inbound``; one that cannot be read is
  dropped with a warning line) and hands it to ``on_message`` as a
  ``Delivery``, in its own thread: a server's handler must return at
  once (queue the work for a thread pool);
* it keeps the connection's heartbeats (kombu's ``heartbeat_check``),
  and a broker silent for two heartbeats counts as gone;
* the work others hand it (``run_soon``, ``call``: publishing a reply,
  acknowledging or requeueing a message) runs in this one thread, in the
  order it was handed over, so a reply always leaves before its
  message's acknowledgement, and no other thread touches the channel;
* a reply waits for the broker's confirm ``Broker.confirm_wait``
  seconds at most (``scheduler.transport.confirms``): a node cut off
  from its cluster takes replies to quorum queues and confirms none of
  them until it notices and pauses, after ``net_ticktime``. The reply
  is then sent again through another node (``scheduler.rpc.late_ack``),
  and so are the replies of the next ``REPLIES_ELSEWHERE`` seconds,
  while the loop keeps its connection: a connection to another node
  would consume nothing sooner (declaring and consuming a queue the
  cut-off node leads waits for that node until the others hold it for
  gone), and a good node does not confirm a reply to a queue the
  cut-off node leads either; the cut-off node closes the connection
  when it pauses. A connection from which not a frame came while a
  reply waited (``confirms.Silent``) is dead, and is dropped;
* when the connection fails in any way (reading, an acknowledgement, a
  reply, a heartbeat; the broker went away, the channel was closed) it
  drops the connection and connects again, to the next broker host if
  there are several, later and later (``rabbit_retry_interval``,
  ``rabbit_retry_backoff``, ``rabbit_interval_max``), declares the queues
  again and consumes them; messages read on the lost connection are
  void (never acknowledged: the broker delivers them again). Nothing but
  ``close`` ends the thread;
* ``stop_consuming`` cancels the consumers on the broker (from then on
  the broker gives this server's messages to others) and hands nothing
  more to ``on_message``: a message read after that is left
  unacknowledged, and goes to another server when the channel closes.

A transport without a socket (kombu's in-memory one, for the simulator
and the unit tests) is polled every ``POLL_INTERVAL`` instead of waited
on.
"""

import collections
import os
import select
import socket
import threading
import time
from concurrent import futures

import kombu
from amqp import exceptions as amqp_exceptions
from oslo_log import log as logging

from scheduler.transport import confirms
from scheduler.transport import outage
from scheduler.transport import wire

LOG = logging.getLogger(__name__)

#: seconds the loop waits on an idle connection before it looks again
IDLE_WAIT = 1.0
#: seconds between two polls of a transport without a socket
POLL_INTERVAL = 0.001
#: seconds a read may wait for the rest of a frame once data arrived
FRAME_WAIT = 0.05
#: seconds ``start`` waits for the first connection to consume
START_WAIT = 60.0
#: seconds after a reply went unconfirmed during which replies are
#: sent through another node (module docstring)
REPLIES_ELSEWHERE = 10.0
#: the bodies a server decodes (kombu refuses any other content type)
ACCEPT = ('json',)


class ReplyQueueMissing(Exception):
    """The broker returned a reply: no queue of that name (its caller's
    connection is gone, or the queue is being re-declared)."""


def _returned(exc, exchange, routing_key, message):
    """kombu's ``on_return``: a mandatory publish that reached no queue."""
    raise ReplyQueueMissing('no queue %s: %s' % (routing_key, exc))


class Delivery(dict):
    """A message read: the message dict (``wire.unpack``), ``raw``,
    the kombu message it came in, and ``text_length``, the characters
    of the JSON text it was read from (``wire.text_length``)."""

    def __init__(self, message, raw, text_length=None):
        super().__init__(message)
        self.raw = raw
        self.text_length = text_length


class ConsumerLoop:
    """The reading and writing thread of one server (module docstring).

    ``broker`` is a ``scheduler.transport.broker.Broker``, ``target`` an
    oslo.messaging ``Target``; ``on_message(delivery)`` gets each
    ``Delivery``; ``on_tick()`` runs after every wake-up and returns the
    seconds until it wants to run again (None: no wish)."""

    def __init__(self, broker, target, on_message, on_tick=None,
                 name='consumer'):
        self.name = name
        self.broker = broker
        self._queues = broker.queues(target)
        self._on_message = on_message
        self._on_tick = on_tick or (lambda: None)
        self._prefetch = 0
        self._connection = self._channel = None
        self._consumer = self._producer = None
        self._confirms = None
        self._work = collections.deque()
        # kombu messages read and not acknowledged, oldest first; those
        # settled since the last acknowledgement
        self._unsettled = collections.deque()
        self._settled_now = []
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._woken = False
        self._wake_lock = threading.Lock()   # no write once closed
        self._thread = None
        self._ident = None
        self._consuming = True
        self._closing = False
        self._recover = True    # not connected and consuming yet
        self._connected = threading.Event()
        self._attempts = 0
        self._refused = None    # what the broker said when it refused
        self._one_by_one = True
        self._heartbeat_every = broker.heartbeat_every
        self._next_heartbeat = 0.0
        # a reply or an acknowledgement failed on the connection
        self._broken = False
        # replies go through another node until then (monotonic clock)
        self._replies_elsewhere_until = 0.0

    # -- set-up and shutdown ----------------------------------------------

    def bound_prefetch(self, count):
        """At most ``count`` unacknowledged messages on the channel, now
        and after every reconnection."""
        self._prefetch = count or 0
        if self._thread is not None and count:
            self.run_soon(self._set_prefetch)

    @property
    def prefetch(self):
        """The bound on unacknowledged messages (0: none)."""
        return self._prefetch

    @property
    def connection(self):
        """The kombu connection the loop consumes on (None while it
        connects); for tests and diagnostics, used by the loop only."""
        return self._connection

    @property
    def channel(self):
        """The channel the loop consumes on (None while it connects)."""
        return self._channel

    @property
    def unacknowledged(self):
        """Messages read on the current channel and neither acknowledged
        nor requeued yet."""
        return sum(1 for raw in list(self._unsettled)
                   if not raw.acknowledged and not self._void(raw))

    def _set_prefetch(self):
        if self._consumer is not None and self._prefetch:
            self._consumer.qos(prefetch_count=self._prefetch)

    def start(self, wait=START_WAIT):
        """Start the thread; return once it consumes (or after ``wait``
        seconds: it goes on connecting, and says so in the log)."""
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=self.name)
        self._thread.start()
        if not self._connected.wait(wait):
            LOG.warning('%s: not consuming after %.0f s; still trying',
                        self.name, wait)

    def stop_consuming(self, timeout=None):
        """Cancel the consumers on the broker; hand nothing more to
        ``on_message`` (module docstring). Returns once done (or after
        ``timeout`` seconds)."""
        # at once, whatever the broker does: a message read from now on is
        # left unacknowledged, and no reconnection consumes again
        self._consuming = False
        try:
            self.call(self._cancel, timeout=timeout)
        except futures.TimeoutError:
            LOG.warning('%s: consumers not cancelled within %ss',
                        self.name, timeout)

    def close(self, timeout=None):
        """Run the work handed over so far, end the thread, delete this
        server's own fanout queue and close the connection."""
        self._closing = True
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout)
        self._delete_own_queue()
        self._release()
        with self._wake_lock:
            for fd in (self._wake_r, self._wake_w):
                os.close(fd)
            self._wake_r = self._wake_w = None

    def _delete_own_queue(self):
        fanout = self._queues[-1]
        if self._consumer is None or self.broker.stream_fanout:
            return
        try:
            fanout.bind(self._channel).delete()
        except Exception as exc:  # the broker expires it (x-expires)
            LOG.debug('%s: fanout queue %s not deleted: %s', self.name,
                      fanout.name, exc)

    def _release(self, gently=True):
        """Forget the connection: closed with the broker (``gently``:
        kombu's ``release``), or without asking it (``collect``, for a
        connection that failed)."""
        connection, self._connection = self._connection, None
        self._channel = self._consumer = self._producer = None
        self._confirms = None
        if connection is None:
            return
        try:
            (connection.release if gently else connection.collect)()
        except Exception as exc:  # the broker is gone: nothing to close
            LOG.debug('%s: closing the connection: %s', self.name, exc)

    # -- work handed over by other threads ---------------------------------

    def run_soon(self, fn):
        """Run ``fn()`` in the loop's thread, after the work handed over
        before it."""
        self._work.append(fn)
        if threading.get_ident() != self._ident:
            self._wake()

    def call(self, fn, timeout=None):
        """``fn()``'s result, run as ``run_soon`` runs it (its exception
        is raised here; ``futures.TimeoutError`` after ``timeout``
        seconds). Not from the loop's own thread."""
        if threading.get_ident() == self._ident:
            raise RuntimeError('ConsumerLoop.call from its own thread')
        done = futures.Future()

        def run():
            if not done.set_running_or_notify_cancel():
                return      # its caller stopped waiting
            try:
                done.set_result(fn())
            except BaseException as exc:
                done.set_exception(exc)
        self._work.append(run)
        self._wake()
        try:
            return done.result(timeout)
        except futures.TimeoutError:
            if done.cancel():
                raise
            return done.result()   # running already: it ends soon

    def _wake(self):
        if self._woken:
            return
        self._woken = True
        with self._wake_lock:
            if self._wake_w is None:    # closed: the loop has ended
                return
            try:
                os.write(self._wake_w, b'.')
            except BlockingIOError:  # the pipe holds a wake-up already
                pass

    def _run_work(self):
        if not self._work:
            return
        while self._work:
            fn = self._work.popleft()
            try:
                fn()
            except Exception as exc:
                # a requeue on a lost connection (the broker delivers the
                # message again): ``_broken`` drops it below
                LOG.debug('%s: %s', self.name, exc)
                self._broken |= self._connection_error(exc)
        if self._broken:
            raise ConnectionError('a reply or an acknowledgement failed')
        self._acknowledge_settled()

    # -- the loop ------------------------------------------------------------

    def _run(self):
        self._ident = threading.get_ident()
        while not self._turn():
            pass
        self._connected.set()

    def _turn(self):
        """One turn of the loop; True once it is closed. A failure of the
        connection, wherever it shows, drops it (module docstring)."""
        try:
            self._run_work()
            if self._closing:
                return True
            if self._recover:
                if self._consuming:
                    self._reconnect()
                else:   # stopped: nothing to read until closed
                    self._pause(IDLE_WAIT)
                return False
            self._read(self._tick())
        except Exception as exc:
            if self._closing:
                return True
            if isinstance(exc, amqp_exceptions.ConsumerCancelled):
                # the broker is there: a queue was deleted, or its leader
                # moved to another node of the cluster
                LOG.warning('%s: the broker cancelled this server\'s '
                            'consumer (%s); declaring the queues again',
                            self.name, exc)
            else:
                self._broker_away(exc)
            self._drop_connection()
        return False

    def _tick(self):
        """``on_tick()``, and how long the loop may wait for the broker.
        Its failure is its own (logged), not the connection's."""
        try:
            wait = self._on_tick()
        except Exception:
            LOG.exception('%s: on_tick failed', self.name)
            wait = None
        return IDLE_WAIT if wait is None else max(0.0, min(wait, IDLE_WAIT))

    def _drop_connection(self):
        """Forget the connection without asking the broker (it may be
        gone; kombu's ``collect``) and connect again (``_reconnect``):
        what was read on it is void, the broker delivers it again."""
        self._recover = True
        self._broken = False
        self._release(gently=False)

    def _connection_error(self, exc):
        """Does ``exc`` say the connection or its channel failed (not, say,
        that a reply's queue is gone)?"""
        connection = self._connection
        if connection is None:
            return True
        return isinstance(exc, (OSError, *connection.connection_errors,
                                *connection.channel_errors))

    def _read(self, wait):
        connection = self._connection
        if connection is None or not connection.connected:
            raise ConnectionError('not connected')
        if self._heartbeat_every > 0:
            wait = max(0.0, min(wait, self._next_heartbeat -
                                time.monotonic()))
        sock = _socket(connection)
        if sock is None:
            self._drain(min(wait, POLL_INTERVAL))
            self._take_wake()
        else:
            self._read_frames(connection, sock, wait)
        if self._heartbeat_every > 0:
            self._heartbeat(connection)

    def _heartbeat(self, connection):
        """kombu's heartbeat check once a heartbeat's time passed: it
        sends one if nothing went out, and raises if the broker was
        silent for two. Run after a read, so the broker's heartbeats
        waiting in the socket count (after a stall of the process, they
        are there)."""
        now = time.monotonic()
        if now >= self._next_heartbeat:
            self._next_heartbeat = now + self._heartbeat_every
            connection.heartbeat_check(rate=self.broker.heartbeat_rate)

    def _read_frames(self, connection, sock, wait):
        if not _pending(sock):
            ready = _wait_readable((sock.fileno(), self._wake_r), wait)
            if self._wake_r in ready:
                self._take_wake()
            if sock.fileno() not in ready:
                return
        while _pending(sock) or _wait_readable((sock.fileno(),), 0):
            # one frame per turn (a message: three); a frame's rest that
            # has not arrived yet is read on a later wake-up
            self._drain(FRAME_WAIT)
            if connection is not self._connection:
                return      # dropped by a message's handling

    def _drain(self, timeout):
        try:
            self._connection.drain_events(timeout=timeout)
        except socket.timeout:
            pass

    def _take_wake(self):
        # read, then clear: a waker that found the flag set before the
        # read has its work in the queue already, which runs next
        try:
            os.read(self._wake_r, 4096)
        except BlockingIOError:
            pass
        self._woken = False

    def _reconnect(self):
        """Connect (each broker host in turn), declare the queues and
        consume them; after every host failed, try again later and
        later (module docstring)."""
        connection = self.broker.connect(self.name)
        try:
            connection.ensure_connection(
                max_retries=max(1, len(self.broker.kombu_urls())),
                interval_start=0, interval_step=0, interval_max=0)
            self._declare_exchanges(connection)
            self._declare_queues(connection)
            channel = connection.channel()
            consumer = kombu.Consumer(
                channel, queues=self._queues, on_message=self._received,
                on_decode_error=self._undecodable, accept=list(ACCEPT),
                auto_declare=False)     # declared just above
            if self._prefetch:
                consumer.qos(prefetch_count=self._prefetch)
            if self._consuming:
                consumer.consume()
            confirming = confirms.on_channel(connection, channel,
                                             self.broker.confirm_wait)
        except Exception as exc:
            self._failed_to_connect(connection, exc)
            return
        self._connection, self._channel = connection, channel
        self._consumer = consumer
        self._producer = kombu.Producer(channel, on_return=_returned)
        self._confirms = confirming
        self._one_by_one = connection.transport.driver_type != 'amqp'
        self._unsettled = collections.deque()
        self._recover = False
        self._refused = None
        back = outage.PROCESS.came_back()
        if back is not None:
            LOG.info(outage.REACHABLE, *back)
        self._attempts = 0
        self._next_heartbeat = 0.0
        self._replies_elsewhere_until = 0.0
        self._connected.set()

    def _declare_exchanges(self, connection):
        """Declare each queue's exchange; one that exists with the other
        durability (a topic exchange declared before quorum queues were
        turned on: the queues are durable then, and so is what the
        driver declares) is taken as it is, with a warning: an
        exchange's durability does not change what its queues get."""
        for queue in self._queues:
            exchange = queue.exchange
            try:
                with connection.channel() as channel:
                    exchange(channel).declare()
            except amqp_exceptions.PreconditionFailed as exc:
                if "inequivalent arg 'durable'" not in str(exc):
                    raise
                LOG.warning('%s: exchange %s exists %sdurable; using it as '
                            'it is (%s)', self.name, exchange.name,
                            '' if not exchange.durable else 'non-',
                            str(exc).split(' - ')[-1])
                queue.exchange = kombu.Exchange(
                    exchange.name, type=exchange.type,
                    durable=not exchange.durable,
                    auto_delete=exchange.auto_delete)

    def _declare_queues(self, connection):
        """Declare each queue (and its binding); a queue the broker says
        it cannot find although it exists (404: a non-durable queue
        whose node of a cluster died or was cut off) is deleted and
        declared again, on a node that serves, as oslo.messaging does."""
        for queue in self._queues:
            try:
                with connection.channel() as channel:
                    queue(channel).declare()
            except amqp_exceptions.NotFound as exc:
                LOG.warning('%s: queue %s is on a node that does not answer '
                            '(%s); deleting it and declaring it again',
                            self.name, queue.name, exc)
                with connection.channel() as channel:
                    queue(channel).delete()
                with connection.channel() as channel:
                    queue(channel).declare()

    def _broker_away(self, exc):
        """A connection failed: the process's first line of an outage
        (``scheduler.transport.outage``), or a debug line."""
        detail = '%s: %s' % (type(exc).__name__, str(exc).replace('\n', ' '))
        if outage.PROCESS.went_away(detail):
            LOG.warning(outage.UNREACHABLE, detail)
        else:
            LOG.debug('%s: the connection to the broker failed (%s)',
                      self.name, detail)

    def _failed_to_connect(self, connection, exc):
        recoverable = tuple(connection.recoverable_connection_errors) + (
            OSError,)
        if isinstance(exc, recoverable):
            self._broker_away(exc)
        elif str(exc) != self._refused:
            # the broker refused a declaration (PRECONDITION_FAILED: a
            # queue declared before with other arguments) or the login:
            # one line each time it says something new
            self._refused = str(exc)
            LOG.error('%s: the broker refused this server\'s connection or '
                      'queues (%s: %s); trying again', self.name,
                      type(exc).__name__, exc)
        try:
            connection.collect()
        except Exception:  # nothing to clean up
            pass
        pause = self.broker.retry_intervals(self._attempts)
        self._attempts += 1
        self._pause(pause)

    def _pause(self, seconds):
        """Sleep, but wake up for work handed over (or ``close``)."""
        if _wait_readable((self._wake_r,), seconds):
            self._take_wake()

    # -- messages --------------------------------------------------------

    def _received(self, raw):
        """kombu's ``on_message`` (in this thread, within a drain):
        messages are noted in the order the broker numbered them."""
        self._unsettled.append(raw)
        try:
            body = raw.decode()
            delivery = Delivery(wire.unpack(body), raw,
                                wire.text_length(body))
        except Exception as exc:
            self._drop_undecodable(raw, exc)
            return
        if not self._consuming:
            return
        try:
            self._on_message(delivery)
        except Exception:
            # say its server's pool was shut down: left unacknowledged,
            # the broker delivers it again
            LOG.exception('%s: a message was not taken; the broker will '
                          'deliver it again', self.name)

    def _undecodable(self, raw, exc):
        """kombu's ``on_decode_error`` (a body that did not inflate
        within its bound, or of a content type not accepted)."""
        self._unsettled.append(raw)
        self._drop_undecodable(raw, exc)

    def _drop_undecodable(self, raw, exc):
        """Acknowledge a message no server could read, with one warning
        line: delivered again, it would fail again."""
        LOG.warning('%s: Dropped a message that cannot be decoded: %s: %s',
                    self.name, type(exc).__name__, exc)
        self.run_soon(lambda: self._settle(raw, False))

    def _cancel(self):
        self._consuming = False
        if self._consumer is None:
            return
        try:
            self._consumer.cancel()
        except Exception as exc:  # the connection closes next anyway
            LOG.debug('%s: consumers not cancelled: %s', self.name, exc)

    def publish(self, body, routing_key):
        """Publish ``body`` to queue ``routing_key`` through the default
        exchange, as oslo.messaging sends a reply (mandatory: a queue
        that is gone raises ``ReplyQueueMissing``; confirmed by the
        broker within ``Broker.confirm_wait`` s, else
        ``confirms.Unconfirmed``, and for ``REPLIES_ELSEWHERE`` s the
        replies after it raise that at once: their caller sends them
        through another node). Run it in the loop's thread (``call``).
        A failure of the connection is raised here, and the loop drops
        the connection; a publish after it fails at once."""
        if self._producer is None or self._broken:
            raise ConnectionError('not connected')
        if time.monotonic() < self._replies_elsewhere_until:
            raise confirms.Unconfirmed('replies go through another node '
                                       'for now')
        try:
            _publish(self._producer, self._confirms, self.broker, body,
                     routing_key)
        except confirms.Unconfirmed:
            self.broker.unconfirmed(self._connection)
            self._replies_elsewhere_until = (time.monotonic() +
                                             REPLIES_ELSEWHERE)
            raise
        except Exception as exc:
            self._broken |= self._connection_error(exc)
            raise

    # -- acknowledgements --------------------------------------------------

    def settle(self, delivery, requeue=False):
        """Acknowledge ``delivery`` (a ``Delivery`` this loop handed
        over), or requeue it, from any thread: in the loop's thread,
        after the work handed over before (a reply), and several at once
        where the broker numbered them in a row (one ``basic.ack`` with
        ``multiple`` for the oldest messages all settled: a batch of
        reports is one frame)."""
        raw = delivery.raw
        self.run_soon(lambda: self._settle(raw, requeue))

    def settle_here(self, delivery):
        """``settle(delivery)`` from work the loop runs (its thread)."""
        self._settle(delivery.raw, False)

    def _settle(self, raw, requeue):
        if self._void(raw):
            pass        # read on a connection dropped since: redelivered
        elif requeue:
            raw.requeue()
        elif self._one_by_one:
            raw.ack()
        raw.scheduler_settled = True
        self._settled_now.append(raw)

    def _void(self, raw):
        """Was kombu message ``raw`` read on a channel closed since (the
        broker delivers it again: no acknowledgement or requeue of
        it)?"""
        return (raw.channel is None or raw.channel is not self._channel
                or not getattr(raw.channel, 'is_open', True))

    def _acknowledge_settled(self):
        """Acknowledge what was settled since the last call: one
        ``basic.ack`` (``multiple``) for the oldest unsettled messages if
        they are all settled now, then one each for the others (a message
        that takes long must not hold back the acknowledgements of those
        behind it: they count against the prefetch). Messages of a
        channel that closed are void: the broker delivers them again."""
        settled_now, self._settled_now = self._settled_now, []
        if not settled_now:
            return
        unsettled = self._unsettled
        last = None
        while unsettled and getattr(unsettled[0], 'scheduler_settled',
                                    False):
            done = unsettled.popleft()
            if done.acknowledged:   # requeued, or acknowledged alone
                continue
            last = done
        if last is not None and not self._void(last):
            last.ack(multiple=True)
        for raw in settled_now:
            if raw.acknowledged or self._void(raw) or (
                    last is not None and
                    raw.delivery_tag <= last.delivery_tag):
                continue
            raw.ack()
            try:
                unsettled.remove(raw)
            except ValueError:  # acknowledged with the oldest
                pass


def publish_once(broker, body, routing_key):
    """Publish ``body`` as ``ConsumerLoop.publish`` does, over a
    connection of its own (one try at each broker host, those that did
    not confirm in time last), for a reply the loop could not send."""
    with broker.connect('reply') as connection:
        connection.ensure_connection(
            max_retries=max(1, len(broker.kombu_urls())),
            interval_start=0, interval_step=0, interval_max=0)
        channel = connection.channel()
        producer = kombu.Producer(channel, on_return=_returned)
        try:
            _publish(producer, confirms.on_channel(
                connection, channel, broker.confirm_wait),
                broker, body, routing_key)
        except confirms.Unconfirmed:
            broker.unconfirmed(connection)
            raise


def _publish(producer, confirming, broker, body, routing_key):
    """A reply to queue ``routing_key`` (``ConsumerLoop.publish``),
    confirmed by the broker if ``confirming``."""
    producer.publish(body, exchange='', routing_key=routing_key,
                     mandatory=broker.mandatory_replies,
                     compression=broker.compression, serializer='json',
                     timeout=broker.publish_timeout)
    if confirming is not None:
        confirming.published()


def _socket(connection):
    """The broker client's socket (None for a transport without one, or
    a connection that has none open)."""
    client = connection.connection   # kombu's: the transport's client
    try:
        return getattr(client, 'sock', None)
    except AttributeError:      # py-amqp's, closed: no transport
        return None


def _pending(sock):
    """Are bytes of a TLS connection already decrypted but not read
    (``select`` would not see them)?"""
    pending = getattr(sock, 'pending', None)
    return bool(pending is not None and pending())


def _wait_readable(fds, seconds):
    """The descriptors of ``fds`` readable within ``seconds`` (``poll``:
    no limit on descriptor numbers, unlike ``select``). A closed socket
    (descriptor -1) raises ``ConnectionError``."""
    poller = select.poll()
    for fd in fds:
        if fd < 0:
            raise ConnectionError('socket closed')
        poller.register(fd, select.POLLIN)
    ready = set()
    for fd, events in poller.poll(seconds * 1000.0):
        if events & (select.POLLNVAL | select.POLLERR):
            raise ConnectionError('socket closed')
        ready.add(fd)
    return ready
