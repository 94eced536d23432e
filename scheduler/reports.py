"""ReportWriter: a worker's tracker reports, written in batches.

``update_resource_stats`` is a cast that thousands of trackers send every
minute. Written one by one, each report is a transaction that waits for the
global change counter and holds an RPC thread meanwhile, so a storm of
reports starves ``select_destinations``. The manager hands validated
reports to ``submit``, which returns at once; one writer thread stores all
reports pending at that moment in one transaction (one counter bump),
keeping only the newest report of each (host, node).

A batch that fails is retried report by report, so one bad report is
dropped (with a warning) without the others. Reports still pending when a
worker dies are lost; trackers report again on their next period, and
``stop()`` writes what is pending on a clean shutdown.
"""

import threading

from oslo_log import log as logging

from scheduler.db import providers as db_providers

LOG = logging.getLogger(__name__)

MAX_BATCH = 500


def _newer(node, other):
    mine, theirs = node.get('updated_at'), other.get('updated_at')
    return mine is None or theirs is None or mine >= theirs


class ReportWriter:

    def __init__(self, db, ratio_defaults):
        self.db = db
        self.ratio_defaults = ratio_defaults
        self.written = 0
        self._pending = {}
        self._busy = False
        self._stopping = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='report-writer')

    def start(self):
        self._thread.start()
        return self

    def submit(self, node):
        key = (node.host, node.nodename)
        with self._changed:
            current = self._pending.get(key)
            if current is None or _newer(node, current):
                self._pending[key] = node
            self._changed.notify_all()

    def flush(self, timeout=30.0):
        """Wait until every report submitted so far is written."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._pending and not self._busy, timeout)

    def stop(self, timeout=30.0):
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _take(self):
        with self._changed:
            self._changed.wait_for(lambda: self._pending or self._stopping)
            if not self._pending:
                return None
            keys = list(self._pending)[:MAX_BATCH]
            self._busy = True
            return [self._pending.pop(k) for k in keys]

    def _run(self):
        while True:
            batch = self._take()
            if batch is None:
                return
            try:
                self._write(batch)
            finally:
                with self._changed:
                    self._busy = False
                    self._changed.notify_all()

    def _write(self, batch):
        try:
            db_providers.record_compute_nodes(self.db, batch,
                                              self.ratio_defaults)
            self.written += len(batch)
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
