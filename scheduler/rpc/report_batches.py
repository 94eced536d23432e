"""The report topic taken in batches: one transaction, then the acks.

On ``scheduler.transport`` (RabbitMQ, or kombu's in-memory transport of
the unit tests), ``ReportBatchServer`` serves the report topic instead of
``scheduler.rpc.late_ack.ReportServer``. Its consumer loop's thread
(``scheduler.transport.consumer_loop``) gathers up to ``[scheduler]
report_batch_size`` messages, or what arrives within
``report_batch_window`` seconds of the batch's first, and hands them to
a thread as one batch:

* each message is dispatched as a single one is (the same dispatcher:
  envelope and edge checks, policy, the manager's method); a bad message
  is refused with one warning and acknowledged, as before;
* the reports the batch's ``update_resource_stats`` submit are held by
  the report writer (``ReportWriter.holding``) instead of being waited
  for one by one; the newest of each (host, node) is kept;
* the held reports are written together, in one transaction
  (``ReportWriter.wait``, ``scheduler.db.providers.absorb_reports``);
* then every message of the batch is acknowledged, but those whose
  report was not stored: each of these is requeued once
  (``LateAckServer.requeue_once_only``), as a single message is.

A worker killed mid-batch (SIGKILL) has acknowledged none of its
messages: the broker delivers the whole batch again, to another worker.
The other casts of the topic (instance info) are handled as they come
in the batch; a call on the topic is handled as a single message. When
the server stops, the batch being gathered is handled.

The broker pushes a server at most ``report_batch_size`` unacknowledged
messages per thread (``BATCH_THREADS``: a batch is gathered and checked
while the one before it is written). A batch whose window closed while
every thread still handles one goes on gathering, up to
``report_batch_size``, until a thread is free: the slower the database
(a worker behind a slow link to it), the larger the batches, so a worker
keeps up with its share of the reports. Handed over at the window's end
instead, each batch held the few reports of 0.25 s and cost a
transaction of its own: a worker 200 ms from its database wrote 1.4
reports a second, and held the rest of its share for minutes
(``tests/functional/test_host_cut.py``, the slow link).

With another driver, or ``report_batch_size = 1``, ``server_class``
names the per-message ``ReportServer`` instead.
"""

import threading
import time

from oslo_log import log as logging

from scheduler.rpc import late_ack
from scheduler.transport import broker as transport_broker

LOG = logging.getLogger(__name__)

#: threads of a batch server: one writes while the next batch is read
BATCH_THREADS = 2
#: seconds between two looks for a free thread, while a batch waits
BUSY_POLL = 0.05


def server_class(conf, writer=None):
    """(class, its extra keyword arguments) of the report topic's server:
    batches with a kombu transport (RabbitMQ) and the endpoint's
    ``writer`` (a ``scheduler.service.report_writer.ReportWriter``), one
    message at a time otherwise."""
    if (writer is None or conf.scheduler.report_batch_size < 2
            or not transport_broker.is_kombu_url(conf)):
        return late_ack.ReportServer, {}
    return ReportBatchServer, {'writer': writer, 'batch': (
        conf.scheduler.report_batch_size,
        conf.scheduler.report_batch_window)}


class ReportBatchServer(late_ack.ReportServer):
    """See the module docstring. ``writer``: the ``ReportWriter`` behind
    the endpoint's ``update_resource_stats``; ``batch``: (messages,
    seconds) a batch holds at most."""

    pool_size = BATCH_THREADS

    def __init__(self, broker, target, dispatcher, writer, batch,
                 **kwargs):
        super().__init__(broker, target, dispatcher, **kwargs)
        self.writer = writer
        self.batch = batch
        # gathered by the loop's thread only
        self._gathered = []
        self._due = None
        # batches handed over and not yet handled (``handling``)
        self._handling = 0
        self._handling_lock = threading.Lock()

    @property
    def handling(self):
        """Batches handed over to a thread and not yet handled."""
        return self._handling

    @property
    def gathered(self):
        """Casts read and gathered into the next batch, not yet handed
        over."""
        return len(self._gathered)

    def prefetch(self):
        return self.batch[0] * super().prefetch()

    def stop(self):
        """Stop consuming; the casts gathered so far are handled."""
        super().stop()
        if self.loop is not None:
            try:
                self.loop.call(self._hand_over, timeout=late_ack.STOP_WAIT)
            except Exception as exc:  # left unacknowledged: redelivered
                LOG.warning('Gathered reports not handled at stop: %s', exc)

    def _received(self, message):
        """A message read by the loop (its thread): a call is served
        alone, a cast joins the batch being gathered."""
        inbound = late_ack.Inbound(self, message)
        if inbound.msg_id:
            self._pool.submit(self._process, inbound)
            return
        self._gathered.append(inbound)
        if len(self._gathered) >= self.batch[0]:
            self._hand_over()
        elif self._due is None:
            self._due = time.monotonic() + self.batch[1]

    def _tick(self):
        """Hand the batch over once its window closed and a thread is
        free to take it (module docstring); seconds until the next look."""
        if self._due is None:
            return None
        left = self._due - time.monotonic()
        if left > 0:
            return left
        with self._handling_lock:
            if self._handling >= self.threads:
                return BUSY_POLL
        self._hand_over()
        return None

    def _hand_over(self):
        casts, self._gathered, self._due = self._gathered, [], None
        if casts:
            with self._handling_lock:
                self._handling += 1
            self._pool.submit(self._process_batch, casts)

    def _process_batch(self, casts):
        try:
            self._handle_batch(casts)
        except Exception:
            LOG.exception('Handling a batch of %d casts', len(casts))
        finally:
            with self._handling_lock:
                self._handling -= 1
            for message in casts:
                if not message.requeued:
                    message.settle()

    def _handle_batch(self, casts):
        """Dispatch every cast, holding their reports; write these; requeue
        once the casts whose report was not stored."""
        submitted = []
        with self.writer.holding() as held:
            for message in casts:
                start = len(held)
                self._handle_cast(message)
                submitted.append(held[start:])
        try:
            self.writer.wait(held)
        except Exception:
            # its reports are not known to be stored: check() says so
            LOG.exception('Storing a batch of %d reports', len(held))
        for message, tickets in zip(casts, submitted):
            try:
                self.writer.check(tickets)
            except self.requeue_once as exc:
                self.requeue_once_only(message, exc)
