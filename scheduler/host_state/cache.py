"""HostStateCache: a worker's HostTable kept in step with the database.

The first refresh loads every provider and aggregate (cold start); later
ones first read the global change counter (one cheap query) and, only if it
moved, pull the providers and aggregates whose change_seq is above the last
value seen (see ``scheduler.db.models`` for why that never misses a
change). A refresh runs
before a decision when ``[scheduler] refresh_interval`` has passed (0:
always), and at once after a claim conflict.

Callers hold ``cache.lock`` while they read the table and apply tentative
claims, so threads of one worker never plan on the same capacity.
"""

import gc
import threading
import time

from scheduler.db import aggregates as db_aggregates
from scheduler.db import api as db_api
from scheduler.db import instances as db_instances
from scheduler.db import providers as db_providers
from scheduler.host_state.table import HostTable


class HostStateCache:

    def __init__(self, db, refresh_interval=0.0, clock=time.monotonic,
                 default_zone=None, image_properties=()):
        """``image_properties``: the image properties to count per host
        (ImagePropertiesWeigher); none means instances are not loaded."""
        self.db = db
        self.refresh_interval = refresh_interval
        self.table = HostTable(default_zone=default_zone,
                               image_properties=image_properties)
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
            with self.db.reader() as session:
                current = db_api.current_change_seq(session)
            self._last_refresh = now
            if current == self.last_seq:
                return 0
            # every change numbered up to ``current`` is committed, so
            # the queries below see all of them (and maybe later ones,
            # which the next refresh will simply apply again)
            cold = self.last_seq is None
            if cold:
                # hundreds of thousands of small objects: the collector
                # would run dozens of useless passes over them
                gc.disable()
            try:
                rows, _ = db_providers.load_changes(self.db,
                                                    since=self.last_seq)
                self.table.apply(rows)
            finally:
                if cold:
                    gc.enable()
                    gc.freeze()
            self.table.apply_aggregates(db_aggregates.load_aggregate_changes(
                self.db, since=self.last_seq))
            if self.table.image_properties.enabled:
                self.table.image_properties.apply(
                    db_instances.load_instance_changes(self.db,
                                                       since=self.last_seq))
            self.last_seq = current
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
