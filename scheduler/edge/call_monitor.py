"""Call-monitor heartbeats for a worker's running calls, from one thread.

A caller that sets oslo.messaging's ``call_monitor_timeout`` (the
scheduler's client does) expects a heartbeat every half of that timeout
while its call runs, and gives up on a call that sends none.
oslo.messaging's dispatcher starts and joins one thread per call for it;
that cost a worker about a tenth of a millisecond per call, for calls
that almost always answer long before the first heartbeat is due.

``CallMonitor`` keeps the same promise with one thread per worker::

    watch = monitor.watch(incoming)     # before dispatching
    try:
        ...                             # the call
    finally:
        monitor.done(watch)             # no heartbeat after this returns

A call gets its first heartbeat half its timeout after ``watch`` and one
every half timeout after that, until ``done``. A timeout below 2 s (or
none) gets no heartbeat, as in oslo.messaging.
"""

import heapq
import itertools
import threading
import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class _Watch:
    __slots__ = ('due', 'interval', 'incoming', 'active', 'lock')

    def __init__(self, due, interval, incoming):
        self.due = due
        self.interval = interval
        self.incoming = incoming
        self.active = True
        # held while a heartbeat is sent, so done() waits for it
        self.lock = threading.Lock()


def heartbeat_interval(client_timeout):
    """Seconds between heartbeats for a caller's timeout; None: none."""
    try:
        interval = int(client_timeout) / 2
    except (TypeError, ValueError):
        return None
    return interval if interval >= 1 else None


class CallMonitor:

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._cond = threading.Condition()
        self._heap = []
        self._order = itertools.count()
        self._thread = None

    def watch(self, incoming):
        """Start sending heartbeats for ``incoming`` when due; returns
        what to pass to ``done`` (None if it asked for none)."""
        interval = heartbeat_interval(getattr(incoming, 'client_timeout',
                                              None))
        if interval is None:
            return None
        watch = _Watch(self._clock() + interval, interval, incoming)
        with self._cond:
            heapq.heappush(self._heap, (watch.due, next(self._order), watch))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name='call-monitor', daemon=True)
                self._thread.start()
            elif self._heap[0][2] is watch:
                self._cond.notify()
        return watch

    def done(self, watch):
        """The call answered: no heartbeat for it from now on."""
        if watch is not None:
            with watch.lock:
                watch.active = False

    def _next_due(self):
        """The next watch whose heartbeat is due (waits for it)."""
        with self._cond:
            while True:
                while self._heap and not self._heap[0][2].active:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                wait = self._heap[0][0] - self._clock()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                return heapq.heappop(self._heap)[2]

    def _run(self):
        while True:
            watch = self._next_due()
            with watch.lock:
                if not watch.active:
                    continue
                try:
                    watch.incoming.heartbeat()
                except Exception as exc:
                    # broker or caller gone: the call times out as it would
                    LOG.debug('Call-monitor heartbeat failed: %s', exc)
                    continue
            watch.due += watch.interval
            with self._cond:
                heapq.heappush(self._heap,
                               (watch.due, next(self._order), watch))
