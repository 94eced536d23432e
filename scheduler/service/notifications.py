"""Versioned notifications about scheduling decisions (oslo.messaging).

Off by default. Enable with ``[oslo_messaging_notifications] driver =
messagingv2``; they go to ``[oslo_messaging_notifications] topics``
(default ``notifications``) on ``[oslo_messaging_notifications]
transport_url`` (default: the RPC one). Events:
``scheduler.select_destinations.start``, ``.end`` (chosen hosts,
duration) and ``.error`` (the exception's class and message), sent by
``deciding``, a context manager around the driver's call; a notification
that cannot be sent is logged and never fails the decision.

Off the request's critical path: ``deciding`` builds each payload and
hands it to one sender thread per worker, which sends them in order
(``.start`` before ``.end``). A decision never waits for the broker; at
most ``QUEUE_LIMIT`` notifications wait to be sent, past that they are
dropped with a warning (a broker that stays away must not grow the
worker's memory). ``flush()`` waits until every queued one was sent,
``stop()`` (clean shutdown) sends what is queued, then ends the thread.
"""

import contextlib
import dataclasses
import queue
import threading
import time

import oslo_messaging
from oslo_log import log as logging

from scheduler import objects

LOG = logging.getLogger(__name__)

EVENT = 'scheduler.select_destinations'
QUEUE_LIMIT = 10000
_STOP = object()


@dataclasses.dataclass
class Decision:
    """What the block of ``deciding`` chose (one list per instance)."""

    selections: list = None


class SelectDestinationsNotifier:

    def __init__(self, conf, host):
        self.enabled = bool(conf.oslo_messaging_notifications.driver)
        self._notifier = None
        self._queue = queue.Queue(maxsize=QUEUE_LIMIT)
        self._sender = None
        self._lock = threading.Lock()
        if self.enabled:
            transport = oslo_messaging.get_notification_transport(conf)
            self._notifier = oslo_messaging.Notifier(
                transport, publisher_id='scheduler.%s' % host,
                serializer=objects.SchedulerObjectSerializer())

    def flush(self):
        """Wait until every queued notification was sent (or failed)."""
        self._queue.join()

    def stop(self):
        """Send what is queued, then end the sender thread."""
        with self._lock:
            sender, self._sender = self._sender, None
        if sender is not None:
            self._queue.put(_STOP)
            sender.join()

    def _send_queued(self):
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                self._send(*item)
            finally:
                self._queue.task_done()

    def _payload(self, ctxt, spec, consumers, **extra):
        return objects.SelectDestinationsPayload(
            request_id=getattr(ctxt, 'request_id', None),
            project_id=spec.get('project_id'),
            num_instances=len(consumers) if consumers
            else spec.get('num_instances', 1),
            flavor=spec.get('flavor'),
            availability_zone=spec.get('availability_zone'),
            instance_uuids=list(consumers or []), **extra)

    def _emit(self, ctxt, priority, suffix, payload):
        with self._lock:
            if self._sender is None:
                self._sender = threading.Thread(
                    target=self._send_queued, daemon=True,
                    name='notification-sender')
                self._sender.start()
        try:
            self._queue.put_nowait((ctxt, priority, suffix, payload))
        except queue.Full:
            LOG.warning('Dropped %s.%s: %d notifications are waiting for '
                        'the broker', EVENT, suffix, QUEUE_LIMIT)

    def _send(self, ctxt, priority, suffix, payload):
        try:
            getattr(self._notifier, priority)(ctxt, '%s.%s' % (EVENT, suffix),
                                              payload)
        except Exception:
            # a notification must never fail a scheduling decision
            LOG.exception('Could not send %s.%s', EVENT, suffix)

    @contextlib.contextmanager
    def deciding(self, ctxt, spec, consumers):
        """Notify .start, then .end (the block set ``selections`` on what
        it yields) or .error (the block raised; re-raised as it is)::

            with notifier.deciding(ctxt, spec, uuids) as decision:
                decision.selections = driver.select_destinations(...)
        """
        decision = Decision()
        if not self.enabled:
            yield decision
            return
        started = time.monotonic()
        self._emit(ctxt, 'info', 'start',
                   self._payload(ctxt, spec, consumers))
        try:
            yield decision
        except Exception as exc:
            self._emit(ctxt, 'error', 'error', self._payload(
                ctxt, spec, consumers, error=str(exc),
                error_class=type(exc).__name__,
                duration_ms=(time.monotonic() - started) * 1000))
            raise
        selections = decision.selections
        self._emit(ctxt, 'info', 'end', self._payload(
            ctxt, spec, [s[0].instance_uuid for s in selections],
            hosts=[s[0].host for s in selections],
            duration_ms=(time.monotonic() - started) * 1000))
