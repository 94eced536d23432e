"""One thread that reads a server's messages from the broker and writes its
replies and acknowledgements: oslo.messaging's rabbit connection without
its poll loop.

oslo.messaging's RPC server reads each message through a poll loop that
wraps every wait in its connection's ``ensure`` (kombu's ``autoretry``,
a heartbeat check, a decaying timer) and wakes up 1, 2, 4 ... ms after
each message to run the acknowledgements other threads asked for. On
this machine that loop cost a worker more CPU per call than the call's
own decision (doc/source/performance.rst, "A server without
oslo.messaging's poll loop"). ``ConsumerLoop`` keeps what that loop
is built on: the rabbit driver's listen connection (its URL and TLS
handling, the queues and exchanges it declares for a target, its
reconnection and failover), and replaces the loop:

* it waits in ``poll`` on the connection's socket and on a pipe that
  other threads write to when they hand it work, so it wakes once per
  message or per hand-over and never on a timer while it has nothing to
  do (every ``IDLE_WAIT`` s at most);
* it reads the frames that arrived, and hands every message it read to
  ``on_message`` in its own thread: a server's handler must return at
  once (queue the work for a thread pool);
* it keeps the connection's heartbeats, which a listen connection has
  no thread for (the driver's own loop sends them): every
  ``_heartbeat_wait_timeout`` s it sends one if nothing else went out,
  and a broker silent for two heartbeats counts as gone;
* the work others hand it (``run_soon``, ``call``: publishing a reply,
  acknowledging or requeueing a message) runs in this one thread, in the
  order it was handed over, so a reply always leaves before its
  message's acknowledgement, and no other thread touches the channel;
* when the connection fails in any way (reading, an acknowledgement, a
  reply, a heartbeat; the broker went away, the channel was closed) it
  drops the connection and lets the driver's own ``consume`` make a new
  one and consume again, as oslo.messaging does; messages read on the
  lost connection are void (never acknowledged: the broker delivers
  them again), and the new channel gets the prefetch bound and fresh
  consumer tags. Nothing but ``close`` ends the thread;
* ``stop_consuming`` cancels the consumers on the broker (from then on
  the broker gives this server's messages to others) and hands nothing
  more to ``on_message``: a message read after that is left
  unacknowledged, and goes to another server when the channel closes.

A transport without a socket (kombu's in-memory one, for the simulator
and the unit tests) is polled every ``POLL_INTERVAL`` instead of waited
on. The driver's private attributes read here (``_consumers``,
``_new_tags``, ``_producer``, ``_connection_lock``, ``channel``,
``_heartbeat_wait_timeout``) are those of oslo.messaging's rabbit
driver 14 to 18; a test checks them.
"""

import collections
import os
import select
import socket
import threading
import time
from concurrent import futures

from oslo_log import log as logging
from oslo_messaging._drivers import common as rpc_common
from oslo_messaging._drivers import impl_rabbit

LOG = logging.getLogger(__name__)

#: seconds the loop waits on an idle connection before it looks again
IDLE_WAIT = 1.0
#: seconds between two polls of a transport without a socket
POLL_INTERVAL = 0.001
#: seconds a read may wait for the rest of a frame once data arrived
FRAME_WAIT = 0.05
#: seconds the driver's ``consume`` waits for a message once it consumes
#: (it blocks longer while it reconnects, as long as the driver retries)
RECOVER_WAIT = 0.01
#: seconds before another try after the driver gave up reconnecting
RETRY_WAIT = 1.0


def supports(transport):
    """Can a ``ConsumerLoop`` read ``transport``: is it oslo.messaging's
    rabbit driver (RabbitMQ, or a kombu transport)?"""
    return isinstance(getattr(transport, '_driver', None),
                      impl_rabbit.RabbitDriver)


class ConsumerLoop:
    """The reading and writing thread of one server (module docstring).

    ``on_message(message)`` gets each oslo.messaging ``RabbitMessage``
    (the decoded message dict, ``_raw_message`` the kombu message);
    ``on_tick()`` runs after every wake-up and returns the seconds until
    it wants to run again (None: no wish)."""

    def __init__(self, driver, target, on_message, on_tick=None,
                 name='consumer'):
        self.name = name
        self._on_message = on_message
        self._on_tick = on_tick or (lambda: None)
        self._context = driver._get_connection(rpc_common.PURPOSE_LISTEN)
        self.rabbit = self._context.connection
        exchange = driver._get_exchange(target)
        self.rabbit.declare_topic_consumer(
            exchange_name=exchange, topic=target.topic,
            callback=self._received)
        if target.server:
            self.rabbit.declare_topic_consumer(
                exchange_name=exchange,
                topic='%s.%s' % (target.topic, target.server),
                callback=self._received)
        self.rabbit.declare_fanout_consumer(target.topic, self._received)
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
        self._recover = True    # the consumers are not consuming yet
        self._attempts = 0
        # kombu's own transports (the in-memory one) acknowledge one
        # message at a time: ``multiple`` is AMQP's
        self._one_by_one = getattr(self.rabbit.connection.transport,
                                   'driver_type', None) != 'amqp'
        self._heartbeat_every = self.rabbit._heartbeat_wait_timeout
        self._next_heartbeat = 0.0
        # a reply or an acknowledgement failed on the connection
        self._broken = False

    # -- set-up and shutdown ----------------------------------------------

    def bound_prefetch(self, count):
        """At most ``count`` unacknowledged messages on the channel, now
        and after every reconnection (the driver sets each new channel's
        QoS from this attribute)."""
        if not count:
            return
        self.rabbit.rabbit_qos_prefetch_count = count
        with self.rabbit._connection_lock:
            try:
                self.rabbit._set_qos(self.rabbit.channel)
            except Exception as exc:  # reconnecting: the new channel gets it
                LOG.debug('Prefetch not set yet: %s', exc)

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=self.name)
        self._thread.start()

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
        """Run the work handed over so far, end the thread and close the
        connection (its fanout queue is deleted)."""
        self._closing = True
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout)
        try:
            self._context.close()
        except Exception as exc:  # the broker is gone: nothing to close
            LOG.debug('%s: closing the connection: %s', self.name, exc)
        with self._wake_lock:
            for fd in (self._wake_r, self._wake_w):
                os.close(fd)
            self._wake_r = self._wake_w = None

    # -- work handed over by other threads ---------------------------------

    def run_soon(self, fn):
        """Run ``fn()`` in the loop's thread, holding the connection's
        lock, after the work handed over before it."""
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
        with self.rabbit._connection_lock:
            while self._work:
                fn = self._work.popleft()
                try:
                    fn()
                except Exception as exc:
                    # a requeue on a lost connection (the broker delivers
                    # the message again): ``_broken`` drops it below
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
            LOG.info('%s: the connection to the broker failed (%s: %s); '
                     'connecting again', self.name, type(exc).__name__, exc)
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
        """Close the connection without asking the broker (it may be gone)
        and consume again on a new one (``_reconnect``): what was read on
        this one is void, the broker delivers it again."""
        self._recover = True
        self._broken = False
        with self.rabbit._connection_lock:
            connection = self.rabbit.connection
            if connection is None or connection._connection is None:
                return
            try:
                connection.collect()
            except Exception as exc:  # closing what is broken already
                LOG.debug('%s: dropping the connection: %s', self.name, exc)

    def _connection_error(self, exc):
        """Does ``exc`` say the connection or its channel failed (not, say,
        that a reply's queue is gone)?"""
        kombu = self.rabbit.connection
        return isinstance(exc, (OSError, *kombu.connection_errors,
                                *kombu.channel_errors))

    def _beats(self, amqp):
        """Does the loop send this connection's heartbeats (not when
        they are off, ``heartbeat_timeout_threshold = 0``, or for a
        transport without them)?"""
        return (self._heartbeat_every > 0 and
                bool(getattr(amqp, 'heartbeat', None)) and
                hasattr(amqp, 'heartbeat_tick'))

    def _heartbeat(self, amqp):
        """Send a heartbeat if nothing went out for a heartbeat's time;
        raise if the broker was silent for two. Run after a read, so the
        broker's heartbeats waiting in the socket count (after a stall of
        the process, they are there)."""
        now = time.monotonic()
        if now >= self._next_heartbeat:
            self._next_heartbeat = now + self._heartbeat_every
            with self.rabbit._connection_lock:
                amqp.heartbeat_tick(rate=self.rabbit.heartbeat_rate)

    def _read(self, wait):
        amqp = self._amqp()
        if amqp is None:
            raise ConnectionError('not connected')
        beats = self._beats(amqp)
        if beats:
            wait = max(0.0, min(wait, self._next_heartbeat -
                                time.monotonic()))
        self._read_frames(amqp, wait)
        if beats:
            self._heartbeat(amqp)

    def _read_frames(self, amqp, wait):
        sock = _socket(amqp)
        if sock is None:
            with self.rabbit._connection_lock:
                self._drain(min(wait, POLL_INTERVAL))
            self._take_wake()
            return
        if not _buffered(sock, amqp):
            ready = _wait_readable((sock.fileno(), self._wake_r), wait)
            if self._wake_r in ready:
                self._take_wake()
            if sock.fileno() not in ready:
                return
        with self.rabbit._connection_lock:
            if self._amqp() is not amqp:
                return     # reconnected meanwhile
            while _readable(sock, amqp):
                try:
                    # the frames of one method (a message: three)
                    amqp.drain_events(timeout=FRAME_WAIT)
                except socket.timeout:
                    return

    def _drain(self, timeout):
        try:
            self.rabbit.connection.drain_events(timeout=timeout)
        except socket.timeout:
            pass

    def _amqp(self):
        """The connected broker client under the driver's connection
        (None if it is not connected). kombu's ``connection`` property
        would connect; the driver does that, with its retries and the
        queues' declarations."""
        connection = self.rabbit.connection
        if connection is None or not connection.connected:
            return None
        return connection._connection

    def _take_wake(self):
        # read, then clear: a waker that found the flag set before the
        # read has its work in the queue already, which runs next
        try:
            os.read(self._wake_r, 4096)
        except BlockingIOError:
            pass
        self._woken = False

    def _reconnect(self):
        """The driver's own ``consume``: it reconnects if it has to,
        declares the queues again and consumes them (delivering what
        arrives meanwhile to ``_received``). Tried again, later and
        later (the driver's ``rabbit_retry_interval``,
        ``rabbit_retry_backoff`` and ``rabbit_interval_max``), until
        the connection is back and consuming."""
        self.rabbit._new_tags = set(self.rabbit._consumers.values())
        try:
            self.rabbit.consume(timeout=RECOVER_WAIT)
        except rpc_common.Timeout:
            pass
        except Exception as exc:
            LOG.debug('%s: reconnecting failed: %s', self.name, exc)
        if self._amqp() is not None and not self.rabbit._new_tags:
            self._recover = False
            self._attempts = 0
            # what was read on a closed channel is delivered again (under
            # the lock every delivery is noted under: none is missed)
            with self.rabbit._connection_lock:
                channel = self.rabbit.channel
                self._unsettled = collections.deque(
                    raw for raw in self._unsettled if raw.channel is channel)
                if not self._consuming:
                    # stopped meanwhile (its cancel may have timed out)
                    self._cancel()
                elif self.rabbit.rabbit_qos_prefetch_count:
                    # a channel the driver reopened in place keeps the
                    # object, and the driver sets no prefetch on it
                    self.rabbit._set_qos(channel)
            return
        pause = min(self.rabbit.interval_start +
                    self._attempts * self.rabbit.interval_stepping,
                    self.rabbit.interval_max)
        self._attempts += 1
        self._pause(pause)

    def _pause(self, seconds):
        """Sleep, but wake up for work handed over (or ``close``)."""
        if _wait_readable((self._wake_r,), seconds):
            self._take_wake()

    # -- messages --------------------------------------------------------

    def _received(self, message):
        """The driver's consumer callback, holding the connection's lock
        (in this thread; a driver that read frames in another would be
        handled too): messages are noted in the order the broker
        numbered them."""
        self._unsettled.append(message._raw_message)
        if threading.get_ident() != self._ident:
            self.run_soon(lambda: self._hand_over(message))
            return
        self._hand_over(message)

    def _hand_over(self, message):
        if not self._consuming:
            return
        try:
            self._on_message(message)
        except Exception:
            # say its server's pool was shut down: left unacknowledged,
            # the broker delivers it again (raised to the driver, the
            # message would be rejected, and lost)
            LOG.exception('%s: a message was not taken; the broker will '
                          'deliver it again', self.name)

    def _cancel(self):
        self._consuming = False
        for consumer, tag in list(self.rabbit._consumers.items()):
            try:
                consumer.cancel(tag)
            except Exception as exc:  # the connection closes next anyway
                LOG.debug('Consumer %s not cancelled: %s', tag, exc)

    def publish(self, body, routing_key):
        """Publish ``body`` to queue ``routing_key`` through the default
        exchange, as the driver sends a reply (mandatory: a queue that is
        gone raises ``MessageUndeliverable``; confirmed by the broker).
        Run it in the loop's thread (``call``). A failure of the
        connection is raised here, and the loop drops the connection."""
        try:
            self.rabbit._producer.publish(
                body, exchange='', routing_key=routing_key,
                mandatory=self.rabbit.direct_mandatory_flag,
                compression=self.rabbit.kombu_compression)
        except Exception as exc:
            self._broken |= self._connection_error(exc)
            raise

    # -- acknowledgements --------------------------------------------------

    def settle(self, message, requeue=False):
        """Acknowledge ``message`` (a ``RabbitMessage`` this loop handed
        over), or requeue it, from any thread: in the loop's thread,
        after the work handed over before (a reply), and several at once
        where the broker numbered them in a row (one ``basic.ack`` with
        ``multiple`` for the oldest messages all settled: a batch of
        reports is one frame)."""
        raw = message._raw_message
        self.run_soon(lambda: self._settle(raw, requeue))

    def settle_here(self, message):
        """``settle(message)`` from work the loop runs (its thread)."""
        self._settle(message._raw_message, False)

    def _settle(self, raw, requeue):
        if _void(raw):
            pass        # read on a connection dropped since: redelivered
        elif requeue:
            raw.requeue()
        elif self._one_by_one:
            raw.ack()
        raw.scheduler_settled = True
        self._settled_now.append(raw)

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
            if last is not None and last.channel is not done.channel:
                _acknowledge(last, multiple=True)
            last = done
        if last is not None:
            _acknowledge(last, multiple=True)
        for raw in settled_now:
            if raw.acknowledged or (last is not None and
                                    raw.channel is last.channel and
                                    raw.delivery_tag <= last.delivery_tag):
                continue
            _acknowledge(raw)
            try:
                unsettled.remove(raw)
            except ValueError:  # of a channel that closed: forgotten
                pass


def _void(raw):
    """Was kombu message ``raw`` read on a channel closed since (the
    broker delivers it again: no acknowledgement or requeue of it)?"""
    return raw.channel is None or not getattr(raw.channel, 'is_open', True)


def _acknowledge(raw, multiple=False):
    """Acknowledge kombu message ``raw`` (and, with ``multiple``, every
    unacknowledged one the broker delivered before it on its channel)."""
    if _void(raw):
        return
    raw.channel.basic_ack(raw.delivery_tag, multiple=multiple)
    raw._state = 'ACK'


def _socket(amqp):
    """The broker client's socket (None for a transport without one)."""
    return getattr(getattr(amqp, 'transport', None), 'sock', None)


def _buffered(sock, amqp):
    """Are bytes of the connection already read from the socket but not
    parsed (a TLS record's rest, a frame's start read before a timeout)?
    ``select`` would not see them."""
    pending = getattr(sock, 'pending', None)
    if pending is not None and pending():
        return True
    return bool(getattr(amqp.transport, '_read_buffer', b''))


def _readable(sock, amqp):
    return _buffered(sock, amqp) or bool(_wait_readable((sock.fileno(),), 0))


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
