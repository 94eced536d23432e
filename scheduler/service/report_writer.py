"""ReportWriter: a worker's tracker reports, written in batches (group commit).

``update_resource_stats`` is a cast that thousands of trackers send every
minute. It is the only way reports reach the database: the manager hands
each validated report to ``submit``, which returns only once a transaction
holding the report (or a newer report of the same (host, node)) has
committed, and raises ``exception.ReportNotStored`` if the write failed or
did not end within ``timeout`` seconds. The report topic's server
acknowledges the cast only after that (``scheduler.rpc.report_consumer``), so a
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
"""

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
    """One submitted report's outcome: ``done``, and ``error`` if it failed."""

    __slots__ = ('done', 'error')

    def __init__(self):
        self.done = False
        self.error = None


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

    def submit(self, node, timeout=WRITE_TIMEOUT):
        """Store ``node``; return once committed (module docstring)."""
        ticket = self._enqueue(node)
        deadline = time.monotonic() + timeout
        while self._await_turn(ticket, deadline):
            self._write_next_batch()
        if ticket.error:
            raise exception.ReportNotStored(
                host=node.host, node=node.nodename, reason=ticket.error)

    def flush(self, timeout=30.0):
        """Wait until every report submitted so far is handled."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._pending and not self._busy, timeout)

    def stop(self, timeout=30.0):
        self.flush(timeout)

    def _enqueue(self, node):
        """Queue ``node``; of two pending reports of one (host, node), the
        later report time wins, as in the database: a time ahead of this
        worker's clock counts as now, when it arrived."""
        key, ticket = (node.host, node.nodename), _Ticket()
        at = db_providers.report_time(node)
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

    def _write_next_batch(self):
        batch, failed = [], None
        try:
            with self._changed:
                keys = list(self._pending)[:MAX_BATCH]
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
