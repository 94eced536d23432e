"""HostStateCache: a worker's HostTable kept in step with the database.

The first refresh loads every provider (cold start); later ones pull only
providers whose change_seq is above the highest one already seen (see
``scheduler.db.models`` for why that never misses a change). A refresh runs
before a decision when ``[scheduler] refresh_interval`` has passed (0:
always), and at once after a claim conflict.

Callers hold ``cache.lock`` while they read the table and apply tentative
claims, so threads of one worker never plan on the same capacity.
"""

import threading
import time

from scheduler.db import providers as db_providers
from scheduler.host_state.table import HostTable


class HostStateCache:

    def __init__(self, db, refresh_interval=0.0, clock=time.monotonic):
        self.db = db
        self.refresh_interval = refresh_interval
        self.table = HostTable()
        self.lock = threading.RLock()
        self.last_seq = None
        self.rows_applied = 0
        self._clock = clock
        self._last_refresh = None

    def refresh(self, force=False):
        """Apply changes newer than ``last_seq``; returns rows applied."""
        with self.lock:
            now = self._clock()
            if (not force and self._last_refresh is not None
                    and now - self._last_refresh < self.refresh_interval):
                return 0
            rows, max_seq = db_providers.load_changes(self.db,
                                                      since=self.last_seq)
            self.table.apply(rows)
            self.last_seq = max_seq if max_seq is not None else 0
            self._last_refresh = now
            self.rows_applied += len(rows)
            return len(rows)

    def reload_providers(self, provider_ids):
        """Re-read these providers whatever their change_seq (after a
        conflict, or to drop tentative claims that were never written)."""
        with self.lock:
            rows, _ = db_providers.load_changes(
                self.db, provider_ids=list(provider_ids))
            self.table.apply(rows)
            return len(rows)
