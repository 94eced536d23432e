"""ReportWriter: a worker's tracker reports, written in batches.

``update_resource_stats`` is a cast that thousands of trackers send every
minute. It is the only way reports reach the database: the manager hands
validated reports to ``submit``; while one RPC thread writes a batch, the
reports other threads submit wait in memory (only the newest of each
(host, node) is kept) and those threads return at once; the writer then
takes them as its next batch: one read of what is stored, then one write
transaction (one feed stamp) for the reports that change something
(``scheduler.db.providers.record_compute_nodes``: a report that repeats
what is stored costs no write). ``flush()`` waits until every report
submitted so far is written (tests call it before they look).

A batch that fails is retried report by report, so one bad report is
dropped (with a warning) without the others. Reports still pending when a
worker dies are lost; trackers report again on their next period, and
``stop()`` waits for the pending ones on a clean shutdown.
"""

import threading

from oslo_log import log as logging

from scheduler.db import providers as db_providers

LOG = logging.getLogger(__name__)

# small enough that a batch holds its provider locks only briefly (claims
# queue behind them), large enough to share one counter bump
MAX_BATCH = 50


def _newer(node, other):
    mine, theirs = node.get('updated_at'), other.get('updated_at')
    return mine is None or theirs is None or mine >= theirs


class ReportWriter:
    """Combines concurrent reports into batches, without a thread of its
    own: the RPC thread that submits a report while no batch is being
    written writes every pending report (and whatever arrives meanwhile);
    the other threads return at once. Writing thus gets CPU in proportion
    to the reports coming in, and batches grow with the load."""

    def __init__(self, db, ratio_defaults, fresh_for=None, recorder=None):
        """``fresh_for``: see ``record_compute_nodes``; ``recorder``: a
        ``scheduler.metrics.DecisionRecorder`` counting reports."""
        self.db = db
        self.ratio_defaults = ratio_defaults
        self.fresh_for = fresh_for
        self.recorder = recorder
        self.written = 0
        self._pending = {}
        self._busy = False
        self._changed = threading.Condition()

    def submit(self, node):
        key = (node.host, node.nodename)
        with self._changed:
            current = self._pending.get(key)
            if current is None or _newer(node, current):
                self._pending[key] = node
            if self._busy:
                return
            self._busy = True
        try:
            while True:
                batch = self._take()
                if not batch:
                    return
                self._write(batch)
        finally:
            with self._changed:
                self._busy = False
                self._changed.notify_all()

    def flush(self, timeout=30.0):
        """Wait until every report submitted so far is written."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._pending and not self._busy, timeout)

    def stop(self, timeout=30.0):
        self.flush(timeout)

    def _take(self):
        with self._changed:
            keys = list(self._pending)[:MAX_BATCH]
            return [self._pending.pop(k) for k in keys]

    def _write(self, batch):
        try:
            written, unchanged = db_providers.absorb_reports(
                self.db, batch, self.ratio_defaults, fresh_for=self.fresh_for)
            self.written += len(batch)
            if self.recorder is not None:
                self.recorder.reports(written, unchanged)
            return
        except Exception:
            if len(batch) == 1:
                LOG.exception('Could not store the report of %s/%s',
                              batch[0].host, batch[0].nodename)
                return
            LOG.warning('Could not store a batch of %d reports; storing '
                        'them one by one', len(batch))
        for node in batch:
            self._write([node])
