"""ClaimSweeper: releases claims nobody confirmed within the grace period.

A worker that dies between writing a claim and answering its caller
leaves a claim no conductor will build on or delete. A host's
``sync_instance_info`` releases such claims on that host, but a tracker
that never syncs would keep them for ever. Every worker therefore runs a
``ClaimSweeper``: a daemon thread that, every ``interval`` seconds, calls
``scheduler.db.claims.release_unconfirmed`` with ``[scheduler]
unconfirmed_claim_grace_period`` (0 disables the sweep). Workers sweeping
at once is harmless: the release is one transaction under the providers'
locks, and a row is released once.

A database outage (unreachable, restarting, dropped) is logged as one
warning line without traceback or SQL, and its end as one line; any other
error keeps its traceback. ``stop()`` ends the thread and waits for a
sweep in progress, so nothing sweeps a database after its owner let it go
(``SchedulerManager.stop``).
"""

import threading

from oslo_log import log as logging

from scheduler.db import claims
from scheduler.db import outages

LOG = logging.getLogger(__name__)

class ClaimSweeper:
    def __init__(self, db, grace_seconds, interval=None):
        self.db = db
        self.grace_seconds = grace_seconds
        # a claim outlives the grace period by at most a quarter of it
        self.interval = interval or max(grace_seconds / 4.0, 5.0)
        self._stopped = threading.Event()
        self._thread = None
        self._outage = outages.OutageLog(LOG, 'Claim sweep')

    def start(self):
        if self.grace_seconds <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='claim-sweeper')
        self._thread.start()

    def stop(self, timeout=10.0):
        """End the thread; wait up to ``timeout`` s for a sweep running."""
        self._stopped.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def sweep(self):
        """Release what is due now; returns how many rows."""
        released = claims.release_unconfirmed(self.db, self.grace_seconds)
        if released:
            LOG.info('Released %d claim rows unconfirmed for %ds',
                     released, self.grace_seconds)
        return released

    def sweep_once(self):
        """One sweep as the thread runs it: errors are logged, not raised."""
        try:
            self.sweep()
        except Exception as exc:
            if not outages.is_outage(exc):
                LOG.exception('Claim sweep failed; next in %.0fs',
                              self.interval)
                return
            self._outage.failed(exc, self.interval)
            return
        self._outage.worked()

    def _run(self):
        while not self._stopped.wait(self.interval):
            self.sweep_once()

