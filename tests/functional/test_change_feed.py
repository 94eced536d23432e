"""Issue 8: the striped change feed on SQLite, PostgreSQL and MariaDB.

* Writers of different providers do not wait for each other: a claim on
  one provider commits while another transaction holds a different
  provider and its stripe, uncommitted. With ``[database]
  legacy_change_counter`` (the previous release's single counter row) the
  same claim waits, which is the bottleneck the feed removes.
* A reader that only follows the feed never misses a committed change:
  concurrent writers (claims, releases, tracker reports) run while a
  reader keeps applying what the feed returns; at the end, the reader's
  copy equals the database, row by row. The same holds for the
  host-state poller's own reads (a kept connection, the driver's
  cursors, the fast path for rows that only changed usage).
"""

import random
import threading
import time

import pytest
from oslo_utils import uuidutils

from scheduler.db import claims
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.db import changes
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler.host_state import HostStateCache
from tests.functional import databases

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
HOSTS = 24
WRITERS = 6
SECONDS = 4.0


def _node(host, used=0, second=0):
    return objects.ComputeNode.from_stats(host, host, {
        'vcpus': 64, 'memory_mb': 65536, 'local_gb': 1000,
        'vcpus_used': used, 'updated_at': _time(second)})


def _time(second):
    import datetime
    return (datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
            + datetime.timedelta(seconds=second))


def _providers(db, hosts):
    for host in hosts:
        db_providers.record_compute_node(db, _node(host), RATIOS)
    return [provider_reads.find_provider(db, h)['id'] for h in hosts]


def _hold(db, provider_id, stripe, held, release):
    """Lock ``provider_id`` and ``stripe`` and keep them until released."""
    with changes.write(db) as change:
        change.lock_providers([provider_id])
        change.providers([provider_id])
        original = changes.random.randrange
        changes.random.randrange = lambda n: stripe
        try:
            change._stamp()
        finally:
            changes.random.randrange = original
        held.set()
        release.wait(30)
        # the context manager stamps again on exit: harmless
        change._provider_ids.clear()


def _claim_while_held(db, providers):
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold,
                              args=(db, providers[0], 0, held, release))
    holder.start()
    assert held.wait(30)
    started = time.monotonic()
    done = threading.Event()

    def claim():
        claims.claim_resources(db, [claims.Claim(
            uuidutils.generate_uuid(), providers[1], {rcs.VCPU: 1})])
        done.set()
    claimer = threading.Thread(target=claim)
    claimer.start()
    finished = done.wait(3)
    waited = time.monotonic() - started
    release.set()
    holder.join(30)
    claimer.join(30)
    return finished, waited


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_writers_of_different_providers_do_not_wait(database, monkeypatch):
    providers = _providers(database, ['a', 'b'])
    # the claim draws stripe 1: another than the holder's
    monkeypatch.setattr(changes.random, 'randrange', lambda n: 1)
    finished, waited = _claim_while_held(database, providers)
    assert finished, 'a claim on another provider waited %.1fs' % waited


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_the_legacy_counter_serializes_them(database, monkeypatch):
    providers = _providers(database, ['a', 'b'])
    database.legacy_change_counter = True
    monkeypatch.setattr(changes.random, 'randrange', lambda n: 1)
    finished, _ = _claim_while_held(database, providers)
    assert not finished


class _Reader:
    """Follows the feed only, keeping (generation, claimed VCPU,
    reported VCPU) per provider."""

    def __init__(self, db):
        self.db = db
        self.rows = {}
        self.position = None
        self.polls = 0

    def poll(self):
        with self.db.reader() as session:
            current = changes.position(session)
        if self.position is None:
            found = provider_reads.load_changes(self.db)
        else:
            found = provider_reads.load_changes(self.db, since=self.position,
                                                until=current)
        for row in found:
            self.rows[row['id']] = _essence(row)
        self.position = current
        self.polls += 1


def _essence(row):
    vcpu = row['inventories'][rcs.VCPU]
    return row['generation'], vcpu['claimed'], vcpu['reported_used']


def _writer(db, providers, hosts, seed, stop, errors):
    rng = random.Random(seed)
    mine = []
    second = seed * 100000
    try:
        while not stop.is_set():
            action = rng.random()
            if action < 0.5 or not mine:
                consumer = uuidutils.generate_uuid()
                claims.claim_resources(db, [claims.Claim(
                    consumer, rng.choice(providers), {rcs.VCPU: 1})])
                mine.append(consumer)
            elif action < 0.75:
                claims.delete_allocations(db, mine.pop(
                    rng.randrange(len(mine))))
            else:
                second += 1
                db_providers.record_compute_nodes(db, [
                    _node(h, rng.randrange(8), second)
                    for h in rng.sample(hosts, 3)], RATIOS)
    except Exception as exc:  # reported by the test
        errors.append(exc)


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_a_reader_of_the_feed_misses_no_committed_change(database):
    hosts = ['h%02d' % i for i in range(HOSTS)]
    providers = _providers(database, hosts)
    reader = _Reader(database)
    reader.poll()
    stop, errors = threading.Event(), []
    writers = [threading.Thread(target=_writer, args=(
        database, providers, hosts, seed, stop, errors))
        for seed in range(1, WRITERS + 1)]
    for thread in writers:
        thread.start()
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        reader.poll()
    stop.set()
    for thread in writers:
        thread.join(60)
    assert not errors, errors
    reader.poll()
    truth = {row['id']: _essence(row)
             for row in provider_reads.load_changes(database)}
    assert reader.rows == truth
    assert reader.polls > 10


def _table_essence(cache):
    table, vcpu = cache.table, cache.table.resources[rcs.VCPU]
    return {int(table.provider_id[row]): (
        int(table.generation[row]), int(vcpu.claimed[row]),
        int(vcpu.reported_used[row])) for row in range(table.size)}


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_the_pollers_reads_miss_no_committed_change(database):
    hosts = ['h%02d' % i for i in range(HOSTS)]
    providers = _providers(database, hosts)
    cache = HostStateCache(database)
    cache.refresh(force=True)
    stop, errors = threading.Event(), []
    writers = [threading.Thread(target=_writer, args=(
        database, providers, hosts, seed, stop, errors))
        for seed in range(1, WRITERS + 1)]
    for thread in writers:
        thread.start()
    polls = 0
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        cache.refresh(force=True)
        polls += 1
    stop.set()
    for thread in writers:
        thread.join(60)
    assert not errors, errors
    cache.refresh(force=True)
    truth = {row['id']: _essence(row)
             for row in provider_reads.load_changes(database)}
    assert _table_essence(cache) == truth
    assert polls > 10
    cache.stop()


@pytest.mark.parametrize('backend', ['mariadb'])
def test_the_pollers_kept_connection_reads_in_autocommit(database):
    """MariaDB: the connection the poller keeps runs each statement in a
    snapshot of its own (no ROLLBACK per poll; the argument above holds
    for any snapshot taken after the position was read); a connection
    borrowed from the pool keeps one transaction per block."""
    _providers(database, ['h1'])
    count = 'SELECT COUNT(*) FROM providers'
    kept = database.raw_reader(keep=True)
    with kept.cursor() as cursor:
        cursor.execute('SELECT @@autocommit')
        assert cursor.fetchone()[0] == 1
        cursor.execute(count)
        before = cursor.fetchone()[0]
        _providers(database, ['h2'])    # committed between two statements
        cursor.execute(count)
        assert cursor.fetchone()[0] == before + 1
    kept.close()
    borrowed = database.raw_reader()
    with borrowed.cursor() as cursor:
        cursor.execute('SELECT @@autocommit')
        assert cursor.fetchone()[0] == 0
        cursor.execute(count)
        before = cursor.fetchone()[0]
        _providers(database, ['h3'])
        cursor.execute(count)
        assert cursor.fetchone()[0] == before     # one snapshot
    # and the pool's connection went back as the pool lends them
    with database.engine.connect() as connection:
        assert connection.exec_driver_sql('SELECT @@autocommit').scalar() == 0
