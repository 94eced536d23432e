"""ClaimSweeper: releases claims nobody confirmed within the grace period.

A worker that dies between writing a claim and answering its caller
leaves a claim no conductor will build on or delete. A host's
``sync_instance_info`` releases such claims on that host, but a tracker
that never syncs would keep them for ever. Every worker therefore runs a
``ClaimSweeper``: a daemon thread that, every ``interval`` seconds, calls
``scheduler.claims.release_unconfirmed`` with ``[scheduler]
unconfirmed_claim_grace_period`` (0 disables the sweep). Workers sweeping
at once is harmless: the release is one transaction under the providers'
locks, and a row is released once.
"""

import threading

from oslo_log import log as logging

from scheduler import claims

LOG = logging.getLogger(__name__)


class ClaimSweeper:
    def __init__(self, db, grace_seconds, interval=None):
        self.db = db
        self.grace_seconds = grace_seconds
        # a claim outlives the grace period by at most a quarter of it
        self.interval = interval or max(grace_seconds / 4.0, 5.0)
        self._stopped = threading.Event()
        self._thread = None

    def start(self):
        if self.grace_seconds <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='claim-sweeper')
        self._thread.start()

    def stop(self):
        self._stopped.set()

    def sweep(self):
        """Release what is due now; returns how many rows."""
        released = claims.release_unconfirmed(self.db, self.grace_seconds)
        if released:
            LOG.info('Released %d claim rows unconfirmed for %ds',
                     released, self.grace_seconds)
        return released

    def _run(self):
        while not self._stopped.wait(self.interval):
            try:
                self.sweep()
            except Exception:
                LOG.exception('Claim sweep failed; next in %.0fs',
                              self.interval)
