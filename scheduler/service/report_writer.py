"""ReportWriter: a worker's tracker reports, written in batches (group commit).

``update_resource_stats`` is a cast that thousands of trackers send every
minute. It is the only way reports reach the database: the manager hands
each validated report to ``submit``, which returns only once a transaction
holding the report (or a newer report of the same (host, node)) has
committed, and raises ``exception.ReportNotStored`` if the write failed or
did not end within ``timeout`` seconds. The report topic's server
acknowledges the cast only after that (``scheduler.rpc.late_ack``), so a
worker that dies loses no acknowledged report: the broker delivers the
unacknowledged ones to another worker.

The RPC threads share the writing (group commit): while one thread writes a
batch, the reports others submit wait in memory (only the newest of each
(host, node) is kept, by report time as the database orders them:
``scheduler.db.providers.report_time``); when the batch commits, a
waiting thread takes every pending report as the next batch: one read of
what is stored, then one write transaction (one feed stamp) for the
reports that change something (``record_compute_nodes`` in
``scheduler.db.providers``: a report that repeats what is stored costs no
write). Batches thus grow with the load. A batch that fails is retried
report by report, so one bad report fails alone.
``flush()`` waits until every report submitted so far is handled.

A server that takes its messages in batches
(``scheduler.rpc.report_batches``) submits a batch's reports inside
``holding()``, where ``submit`` returns at once; it then ``wait``s for
them all (written in one transaction, of however many reports) and
``check``s each message's before acknowledging it.
"""

import contextlib
import threading
import time

from oslo_log import log as logging

from scheduler.db import outages
from scheduler.db import providers as db_providers
from scheduler import exception

LOG = logging.getLogger(__name__)

# small enough that a batch holds its provider locks only briefly (claims
# queue behind them), large enough to share one counter bump
MAX_BATCH = 50
# how long a cast waits for its report's batch; the broker's own limit on
# an unacknowledged delivery (consumer_timeout) is 30 minutes
WRITE_TIMEOUT = 60.0


class _Ticket:
    """One submitted report's outcome: ``done``, and ``error`` if it
    failed; ``key``: its (host, node)."""

    __slots__ = ('done', 'error', 'key')

    def __init__(self, key):
        self.done = False
        self.error = None
        self.key = key


class ReportWriter:
    """Combines concurrent reports into batches, without a thread of its
    own: a submitting thread whose report is pending while no batch is being
    written writes the next batch; the others wait for theirs."""

    def __init__(self, db, ratio_defaults, fresh_for=None, recorder=None):
        """``fresh_for``: see ``record_compute_nodes``; ``recorder``: a
        ``scheduler.driver.decision_recorder.DecisionRecorder`` counting
        reports."""
        self.db = db
        self.ratio_defaults = ratio_defaults
        self.fresh_for = fresh_for
        self.recorder = recorder
        # one line when the database goes away, one when it is back
        self._outage = outages.OutageLog(LOG, 'Storing tracker reports')
        self.written = 0
        self._pending = {}      # (host, node) -> (report, [tickets])
        self._times = {}        # (host, node) -> the report's time
        self._busy = False
        self._changed = threading.Condition()
        # the tickets of a thread inside holding()
        self._held = threading.local()

    def submit(self, node, timeout=WRITE_TIMEOUT):
        """Store ``node``; return once committed (module docstring), or
        at once inside ``holding()``."""
        ticket = self._enqueue(node)
        held = getattr(self._held, 'tickets', None)
        if held is not None:
            held.append(ticket)
            return
        self.wait([ticket], timeout)
        self.check([ticket])

    @contextlib.contextmanager
    def holding(self):
        """Within the block, ``submit`` from this thread queues its report
        and returns at once; the block yields the list of the tickets so
        queued. ``wait`` for them, then ``check`` each caller's."""
        self._held.tickets = tickets = []
        try:
            yield tickets
        finally:
            self._held.tickets = None

    def wait(self, tickets, timeout=WRITE_TIMEOUT):
        """Return once every ticket is done: written by this thread (the
        reports of all of them in one transaction, with whatever else is
        pending) or by another one (group commit)."""
        deadline = time.monotonic() + timeout
        limit = max(MAX_BATCH, len(tickets))
        for ticket in tickets:
            while self._await_turn(ticket, deadline):
                self._write_next_batch(limit)

    @staticmethod
    def check(tickets):
        """Raise ``ReportNotStored`` for the first of ``tickets`` whose
        report was not stored (or is not known to be: not done)."""
        for ticket in tickets:
            reason = ticket.error or (
                None if ticket.done else 'not written (see the log)')
            if reason:
                host, node = ticket.key
                raise exception.ReportNotStored(host=host, node=node,
                                                reason=reason)

    def flush(self, timeout=30.0):
        """Wait until every report submitted so far is handled."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._pending and not self._busy, timeout)

    def stop(self, timeout=30.0):
        self.flush(timeout)

    def _enqueue(self, node):
        """Queue ``node``; of two pending reports of one (host, node), the
        later report time wins, as in the database: a time ahead of the
        database's clock counts as now, when it arrived."""
        key = (node.host, node.nodename)
        ticket = _Ticket(key)
        at = db_providers.report_time(node, self.db.clock.now())
        with self._changed:
            report, tickets = self._pending.get(key, (node, []))
            if at >= self._times.setdefault(key, at):
                report, self._times[key] = node, at
            self._pending[key] = (report, tickets + [ticket])
        return ticket

    def _await_turn(self, ticket, deadline):
        """True when this thread is to write the next batch, False once the
        ticket is done; ReportNotStored past the deadline."""
        with self._changed:
            while not ticket.done:
                if not self._busy:
                    self._busy = True
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    ticket.error = 'not written within the time allowed'
                    return False
                self._changed.wait(left)
            return False

    def _write_next_batch(self, limit=MAX_BATCH):
        batch, failed = [], None
        try:
            with self._changed:
                keys = list(self._pending)[:limit]
                batch = [self._pending.pop(k) for k in keys]
                for key in keys:
                    del self._times[key]
            failed = {id(n) for n in self._write([r for r, _ in batch])}
        finally:
            with self._changed:
                for report, tickets in batch:
                    # failed is None: the write raised, nothing is known
                    lost = failed is None or id(report) in failed
                    for ticket in tickets:
                        if lost and not ticket.error:
                            ticket.error = 'the write failed (see the log)'
                        ticket.done = True
                self._busy = False
                self._changed.notify_all()

    def _write(self, batch):
        """Store ``batch``; return the reports that could not be stored."""
        try:
            written, unchanged = db_providers.absorb_reports(
                self.db, batch, self.ratio_defaults, fresh_for=self.fresh_for)
            self.written += len(batch)
            if self.recorder is not None:
                self.recorder.reports(written, unchanged)
            self._outage.worked()
            return []
        except Exception as exc:
            if outages.is_outage(exc):
                # every report would fail alike: the broker redelivers
                self._outage.failed(exc)
                return batch
            if len(batch) == 1:
                LOG.exception('Could not store the report of %s/%s',
                              batch[0].host, batch[0].nodename)
                return batch
            LOG.warning('Could not store a batch of %d reports; storing '
                        'them one by one', len(batch))
        return [bad for node in batch for bad in self._write([node])]
