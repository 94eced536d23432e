"""HostStateCache: a worker's HostTable kept in step with the database.

The first refresh loads every provider and aggregate (cold start) and
derives the columns the pipeline reads from the hosts' reports
(``host_values.prime``), so the first request does not pay for decoding
every host's attributes; later
ones read, on a connection the cache keeps and through the driver's own
cursor (``scheduler.db.api.RawReader``: no pool checkout, no SQLAlchemy
statement or result per poll), the change feed's position (one statement)
and, only if it moved, the providers stamped in the stripes that moved
with their inventories (two statements, plain tuples applied column by
column: ``scheduler.host_state.bulk.apply_changes``, whose fast path
stores only the generation and usage of rows that changed nothing else,
a claim's or a release's), and aggregates and instances only if a stripe
that stamps them moved (``scheduler.db.changes`` says why that never
misses a committed change). The position and the providers are read in
one transaction (in autocommit on PostgreSQL); a read that fails closes
the kept connection, the next poll opens another.

When the refresh runs is ``[scheduler] refresh_interval``. A positive value
(the default, 0.1 s) starts a poller thread (``start``) that refreshes that
often, and decisions read the table as it is: a view at most that stale
for the writes of other workers, which may cost a claim conflict and a
retry (the claim re-checks capacity in SQL), never an overcommit. Before
answering NoValidHost the driver forces a refresh, so staleness never
causes a false one. This worker's own writes are never stale: its claims
are applied in memory (``AssumedClaims``), and after any other write it
committed (``Database.local_writes``: an aggregate, a release) its next
decision refreshes first; a tracker report it wrote waits for the
next poll, as other workers' do (``changes.write``). 0 refreshes before
every decision (one round trip per decision).

Database reads happen outside ``cache.lock``; only applying the rows takes
it, so decisions never wait for the database. Callers hold ``cache.lock``
while they read the table and assume claims (``AssumedClaims``).
A row read before one of this worker's claims was confirmed and applied
after it would hide that claim: such rows are re-read next time.
"""

import threading
import time
import weakref

from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy import exc as sa_exc

from scheduler.db import aggregates as db_aggregates
from scheduler.db import changes
from scheduler.db import instances as db_instances
from scheduler.db import outages
from scheduler.db import provider_reads
from scheduler.host_state import bulk
from scheduler.host_state import host_values
from scheduler.host_state.table import HostTable

LOG = logging.getLogger(__name__)


# what an unreachable or restarting database raises, wrapped by oslo.db
# or, when a connection is opened, raw from the driver through SQLAlchemy
_DB_FAULTS = (db_exc.DBError, sa_exc.DBAPIError)


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
        self.position = None
        self.rows_applied = 0
        self.refreshed_at = None
        self._own_writes_seen = None
        self._clock = clock
        self._refreshing = threading.Lock()
        self._poller = None
        self._stop = threading.Event()
        self._outage = outages.OutageLog(LOG, 'Host state refresh')
        # the refreshes' connection, kept (under _refreshing); reloads
        # after a conflict borrow one of the pool (any thread). A cache
        # without a database is filled by its owner (a benchmark's).
        self._reader = db.raw_reader(keep=True) if db is not None else None
        self._reloads = db.raw_reader() if db is not None else None

    # -- the poller ------------------------------------------------------

    def start(self):
        """Refresh in a thread every ``refresh_interval`` seconds (if > 0);
        decisions then skip their own refresh."""
        if self.refresh_interval <= 0 or self._poller is not None:
            return
        self._poller = threading.Thread(
            target=_poll, args=(weakref.ref(self), self._stop,
                                self.refresh_interval),
            daemon=True, name='host-state-poller')
        self._poller.start()

    def stop(self):
        self._stop.set()
        if self._poller is not None:
            self._poller.join(5)
        # not under a refresh stuck on a dead server: that one's
        # connection is closed with it when it fails
        if self._reader is not None and self._refreshing.acquire(timeout=5):
            try:
                self._reader.close()
            finally:
                self._refreshing.release()

    def poll_once(self):
        """One refresh of the poller (after the owner's cold load)."""
        if self.position is None:
            return  # the cold load is the owner's (timed, logged)
        try:
            self.refresh(force=True)
        except _DB_FAULTS as exc:  # an outage: the next poll tries again
            self._outage.failed(exc, self.refresh_interval)
            return
        except Exception:  # a bug: show it; the next poll tries again
            LOG.exception('Host state refresh failed')
            return
        self._outage.worked()

    @property
    def polling(self):
        return self._poller is not None and self._poller.is_alive()

    def behind_own_writes(self):
        """Has this worker committed a write (a report, an aggregate, a
        release) its table has not read yet? Claims don't count: they are
        confirmed in memory."""
        return self.db.local_writes != self._own_writes_seen

    def staleness(self):
        """Seconds since the last refresh started (None before any)."""
        if self.refreshed_at is None:
            return None
        return self._clock() - self.refreshed_at

    # -- refreshing ------------------------------------------------------

    def refresh(self, force=False):
        """Apply what changed since the last refresh; returns rows applied.

        Without ``force``, does nothing while a poller runs or when the
        last refresh is younger than ``refresh_interval``, unless this
        worker wrote something since (``behind_own_writes``).
        """
        if not force and not self.behind_own_writes() and (
                self.polling or (
                    self.refreshed_at is not None and
                    self._clock() - self.refreshed_at <
                    self.refresh_interval)):
            return 0
        with self._refreshing:
            started = self._clock()
            epoch = self.table.confirm_epoch
            # read before the position: a write counted after it may be
            # missed by this refresh, and is caught by the next
            own_writes = self.db.local_writes
            since, read = self.position, None
            if since is None:
                with self._reader.cursor() as cursor:
                    current = changes.poll_position(
                        cursor, self._reader.dialect,
                        legacy=self.db.legacy_change_counter)
                self._refreshed(started, own_writes)
                return self._cold_load(current)
            dirty = self._take_dirty()
            try:
                # the block's end may fail too (MariaDB's and SQLite's
                # rollback), and so may applying what it read
                with self._reader.cursor() as cursor:
                    current, read = self._read_changes(cursor, since, dirty)
                self._refreshed(started, own_writes)
                if read is None:
                    return 0
                return self._apply_changes(current, read, epoch)
            except BaseException:
                # read again at the next refresh
                with self.lock:
                    self.table.dirty.update(dirty)
                raise

    def _refreshed(self, started, own_writes):
        self.refreshed_at = started
        self._own_writes_seen = own_writes

    def _take_dirty(self):
        """The rows to read again whatever the feed says (taken: a refresh
        that fails gives them back)."""
        if not self.table.dirty:  # a glance: decisions hold the lock long
            return set()
        with self.lock:  # reload_providers may add to it meanwhile
            return self.table.take_dirty()

    def _cold_load(self, current):
        with bulk.collector_paused():
            providers, inventories = provider_reads.load_all(self.db)
            aggregates = db_aggregates.load_aggregate_changes(self.db)
            instances = (db_instances.load_instance_changes(self.db)
                         if self.table.image_properties.enabled else None)
            with self.lock:
                if self.table.size:
                    bulk.apply_changes(self.table, providers, inventories)
                else:
                    bulk.load(self.table, providers, inventories)
                self._apply_others(aggregates, instances)
                # now, not on the first request (module docstring)
                host_values.prime(self.table)
        self.position = current
        self.rows_applied += len(providers)
        return len(providers)

    def _read_changes(self, cursor, since, dirty):
        """``(current position, what changed since ``since``)``, None for
        the latter if nothing did: through the poll's ``cursor``, in one
        transaction, the position and the providers changed, and those
        ``dirty``, with their inventories; aggregates and instances, in a
        transaction of their own, only if a stripe that stamps them
        moved."""
        current, providers, inventories = provider_reads.poll(
            cursor, self._reader.dialect, since,
            self.db.legacy_change_counter)
        if current == since and not dirty:
            return current, None
        if dirty:
            more = provider_reads.read_changed(
                cursor, self._reader.dialect, provider_ids=dirty)
            # lists or tuples, as the driver returns rows
            providers = [*providers, *more[0]]
            inventories = [*inventories, *more[1]]
        aggregates = instances = None
        if since.rows_moved(current):
            aggregates = db_aggregates.load_aggregate_changes(
                self.db, since=since, until=current)
            if self.table.image_properties.enabled:
                instances = db_instances.load_instance_changes(
                    self.db, since=since, until=current)
        return current, (providers, inventories, aggregates, instances)

    def _apply_changes(self, current, read, epoch):
        """Apply what ``_read_changes`` read; the table is at ``current``
        then."""
        providers, inventories, aggregates, instances = read
        with self.lock:
            bulk.apply_changes(self.table, providers, inventories,
                               read_epoch=epoch)
            self._apply_others(aggregates, instances)
        self.position = current
        self.rows_applied += len(providers)
        return len(providers)

    def _apply_others(self, aggregates, instances):
        if aggregates is not None:
            self.table.apply_aggregates(aggregates)
        if instances is not None:
            self.table.image_properties.apply(instances)

    def reload_providers(self, provider_ids):
        """Re-read these providers whatever the feed says (after a claim
        conflict: the rows the plan relied on)."""
        epoch = self.table.confirm_epoch
        with self._reloads.cursor() as cursor:
            providers, inventories = provider_reads.read_changed(
                cursor, self._reloads.dialect, provider_ids=provider_ids)
        with self.lock:
            bulk.apply_changes(self.table, providers, inventories,
                               read_epoch=epoch)
        return len(providers)


def _poll(cache_ref, stop, interval):
    """The poller's loop. It holds its cache weakly: a cache nobody uses
    any more (dropped without ``stop()``) ends its thread."""
    while not stop.wait(interval):
        cache = cache_ref()
        if cache is None:
            return
        cache.poll_once()
        del cache
