"""HostStateCache on SQLite: a cold start loads everything, later refreshes
pull only what changed, including what another worker wrote."""

import datetime
import gc
import logging
import sqlite3

import pytest
import sqlalchemy
from oslo_db import exception as db_exc

from scheduler import objects
from scheduler.db import aggregates as db_aggregates
from scheduler.db import claims
from scheduler.model import resource_classes as rcs
from scheduler.db import api as db_api
from scheduler.db import models
from scheduler.db import provider_reads
from scheduler.host_state import HostStateCache
from scheduler.host_state import host_values

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
C2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def hosts(db):
    return [fakes.report(db, 'h%d' % i) for i in range(5)]


def test_cold_start_loads_every_provider(db, hosts):
    cache = HostStateCache(db)
    assert cache.refresh() == 5
    assert cache.table.size == 5
    assert sorted(cache.table.hosts) == ['h0', 'h1', 'h2', 'h3', 'h4']
    assert cache.rows_applied == 5


def test_refresh_pulls_only_changed_rows(db, hosts):
    cache = HostStateCache(db)
    cache.refresh()
    assert cache.refresh() == 0
    assert cache.rows_applied == 5
    fakes.report(db, 'h3', vcpus_used=6)
    claims.claim_resources(db, [claims.Claim(C1, hosts[1], {rcs.VCPU: 2})])
    assert cache.refresh() == 2
    assert cache.rows_applied == 7
    row3 = cache.table.row_of(hosts[3])
    row1 = cache.table.row_of(hosts[1])
    assert cache.table.resources[rcs.VCPU].reported_used[row3] == 6
    assert cache.table.resources[rcs.VCPU].claimed[row1] == 2
    assert cache.table.size == 5


def test_new_host_is_appended(db, hosts):
    cache = HostStateCache(db)
    cache.refresh()
    fakes.report(db, 'new')
    assert cache.refresh() == 1
    assert cache.table.size == 6
    assert cache.table.hosts[-1] == 'new'


def test_sees_a_report_recorded_by_another_database(db, other_db, hosts):
    cache = HostStateCache(db)
    cache.refresh()
    fakes.report(other_db, 'h2', disabled=True)
    fakes.report(other_db, 'from-other-worker')
    assert cache.refresh() == 2
    assert cache.table.disabled[cache.table.row_of(hosts[2])]
    assert 'from-other-worker' in cache.table.hosts


def test_refresh_interval_skips_until_due_or_forced(db, other_db, hosts):
    clock = _Clock()
    cache = HostStateCache(db, refresh_interval=10, clock=clock)
    assert cache.refresh() == 5
    fakes.report(other_db, 'h0', vcpus_used=1)
    clock.now += 5
    assert cache.refresh() == 0
    assert cache.refresh(force=True) == 1
    fakes.report(other_db, 'h1', vcpus_used=1)
    clock.now += 10
    assert cache.refresh() == 1


def test_own_report_waits_for_the_interval_like_any_other(db, hosts):
    """Tracker reports flow all the time: the worker that wrote one reads
    it with its next poll, not before its next decision."""
    clock = _Clock()
    cache = HostStateCache(db, refresh_interval=10, clock=clock)
    cache.refresh()
    fakes.report(db, 'h0', vcpus_used=3)
    assert not cache.behind_own_writes()
    assert cache.refresh() == 0
    clock.now += 10
    assert cache.refresh() == 1
    row = cache.table.row_of(hosts[0])
    assert cache.table.resources[rcs.VCPU].reported_used[row] == 3


def test_own_claim_does_not_force_a_read(db, hosts):
    """The driver confirms its claims in memory; the claim alone is no
    reason for a round trip."""
    clock = _Clock()
    cache = HostStateCache(db, refresh_interval=10, clock=clock)
    cache.refresh()
    claims.claim_resources(db, [claims.Claim(C1, hosts[1], {rcs.VCPU: 2})])
    assert not cache.behind_own_writes()
    assert cache.refresh() == 0
    claims.delete_allocations(db, C1)
    assert cache.behind_own_writes()
    assert cache.refresh() == 1


def test_reload_providers_drops_tentative_claims(db, hosts):
    cache = HostStateCache(db)
    cache.refresh()
    row = cache.table.row_of(hosts[0])
    cache.table.add_claim(row, {rcs.VCPU: 3})
    assert cache.reload_providers([hosts[0]]) == 1
    assert cache.table.resources[rcs.VCPU].claimed[row] == 0
    assert cache.rows_applied == 5  # a reload is not a refresh


def test_empty_database(db):
    cache = HostStateCache(db)
    assert cache.refresh() == 0
    assert cache.table.size == 0
    fakes.report(db, 'first')
    assert cache.refresh() == 1


def _old_release_write(db, provider_id, used):
    """A write as the previous release makes it: change_counter and
    change_seq only, nothing in the striped feed."""
    inv, prov = models.inventories, models.providers
    with db.writer() as session:
        session.execute(inv.update().where(
            inv.c.provider_id == provider_id,
            inv.c.resource_class == rcs.VCPU).values(reported_used=used))
        seq = db_api.next_change_seq(session)
        session.execute(prov.update().where(prov.c.id == provider_id)
                        .values(change_seq=seq))


@pytest.mark.parametrize('legacy', [True, False])
def test_legacy_counter_lets_workers_see_the_previous_release(db, hosts,
                                                              legacy):
    db.legacy_change_counter = legacy
    cache = HostStateCache(db)
    cache.refresh()
    row = cache.table.row_of(hosts[0])
    _old_release_write(db, hosts[0], 7)
    cache.refresh()
    seen = cache.table.resources[rcs.VCPU].reported_used[row]
    # with the option, the previous release's write is seen at once;
    # without it, only the striped feed is followed
    assert seen == (7 if legacy else 0)


def test_an_abandoned_cache_stops_polling(db, hosts):
    """A cache dropped without stop() (a test's, a tool's) does not keep a
    thread reading the database for ever."""
    cache = HostStateCache(db, refresh_interval=0.01)
    cache.refresh()
    cache.start()
    poller = cache._poller
    assert poller.is_alive()
    del cache
    gc.collect()
    poller.join(2)
    assert not poller.is_alive()


def test_poller_logs_a_database_outage_once_and_its_end(db, hosts, caplog):
    cache = HostStateCache(db)
    cache.refresh(force=True)
    outage = db_exc.DBConnectionError(Exception('server closed the '
                                                'connection\n[SQL: SELECT]'))
    results = [outage, outage, outage, None]

    def refresh(force=False):
        result = results.pop(0)
        if result is not None:
            raise result

    cache.refresh = refresh
    with caplog.at_level(logging.INFO, logger='scheduler.host_state.cache'):
        for _ in range(4):
            cache.poll_once()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert 'Host state refresh failed' in messages[0]
    assert 'SQL' not in messages[0] and not caplog.records[0].exc_info
    assert messages[1] == 'Host state refresh works again'


class _Statements:
    """The SELECTs SQLite runs on ``db``'s connections opened from now
    on, pooled or kept (their first word), whoever sends them."""

    def __init__(self, db):
        self.sent = []
        db.engine.dispose()  # the pool's next connections are traced
        sqlalchemy.event.listen(db.engine, 'connect', self._trace)
        self._engine = db.engine

    def _trace(self, dbapi_connection, record):
        dbapi_connection.set_trace_callback(self._count)

    def _count(self, statement):
        verb = statement.split()[0].upper()
        if verb == 'SELECT':  # not BEGIN and ROLLBACK: no round trips
            self.sent.append(verb)

    def close(self):
        sqlalchemy.event.remove(self._engine, 'connect', self._trace)


def test_a_poll_reads_what_moved_and_nothing_else(db, other_db, hosts):
    counter = _Statements(db)
    cache = HostStateCache(db)
    cache.refresh()
    row = cache.table.row_of(hosts[0])
    free = int(cache.table.free(rcs.VCPU)[row])
    try:
        counter.sent.clear()
        assert cache.refresh(force=True) == 0
        # nothing new: the position's one statement
        assert counter.sent == ['SELECT']
        claims.claim_resources(other_db, [claims.Claim(C1, hosts[0],
                                                       {rcs.VCPU: 2})])
        counter.sent.clear()
        assert cache.refresh(force=True) == 1
        # position, providers, inventories: no aggregate read
        assert counter.sent == ['SELECT'] * 3
        db_aggregates.save_aggregates(other_db, [objects.Aggregate(
            uuid=C2, name='a', hosts=['h1'],
            metadata={'availability_zone': 'az9'})])
        counter.sent.clear()
        cache.refresh(force=True)
        # an aggregate's stripe moved: it is read (position, providers
        # of that stripe: none, aggregates)
        assert len(counter.sent) == 3
    finally:
        counter.close()
    assert cache.table.free(rcs.VCPU)[row] == free - 2
    [h1] = cache.table.rows_of_host('h1')
    assert cache.table.view(h1).availability_zone == 'az9'


def test_a_dropped_connection_costs_one_poll_and_loses_nothing(
        db, other_db, hosts, caplog):
    """The poller keeps its connection between polls; when the server
    drops it, the poll fails (one warning), rows left to re-read stay
    so, and the next poll opens another connection and catches up."""
    cache = HostStateCache(db)
    cache.refresh()
    claims.claim_resources(other_db, [claims.Claim(C1, hosts[1],
                                                   {rcs.VCPU: 2})])
    cache.table.dirty.add(hosts[0])
    cache._reader._held.dbapi_connection.close()
    with caplog.at_level(logging.INFO, logger='scheduler.host_state.cache'):
        cache.poll_once()
        assert cache.table.dirty == {hosts[0]}
        cache.poll_once()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert 'Host state refresh failed' in messages[0]
    assert messages[1] == 'Host state refresh works again'
    assert not cache.table.dirty
    row = cache.table.row_of(hosts[1])
    assert cache.table.resources[rcs.VCPU].claimed[row] == 2


def test_a_failed_read_leaves_dirty_rows_dirty(db, hosts, monkeypatch):
    cache = HostStateCache(db)
    cache.refresh()
    cache.table.dirty.add(hosts[0])

    def fails(*args, **kwargs):
        raise db_exc.DBConnectionError(Exception('gone'))
    monkeypatch.setattr(provider_reads, 'read_changed', fails)
    with pytest.raises(db_exc.DBConnectionError):
        cache.refresh(force=True)
    assert cache.table.dirty == {hosts[0]}


class _RollbackFails:
    """A driver connection whose rollback fails (the server went away as
    the poll's block ended, on MariaDB or SQLite)."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def rollback(self):
        raise sqlite3.OperationalError('disk I/O error')


def test_a_block_that_fails_as_it_ends_leaves_dirty_rows_dirty(db, hosts):
    cache = HostStateCache(db)
    cache.refresh()
    cache.table.dirty.add(hosts[0])
    held = cache._reader._held
    held.dbapi_connection = _RollbackFails(held.dbapi_connection)
    with pytest.raises(sqlalchemy.exc.DBAPIError):
        cache.refresh(force=True)
    assert cache.table.dirty == {hosts[0]}


def test_dirty_rows_whose_changes_fail_to_apply_stay_dirty(
        db, hosts, monkeypatch):
    cache = HostStateCache(db)
    cache.refresh()
    cache.table.dirty.add(hosts[0])

    def fails(*args, **kwargs):
        raise ValueError('a bug')
    monkeypatch.setattr(cache, '_apply_changes', fails)
    with pytest.raises(ValueError):
        cache.refresh(force=True)
    assert cache.table.dirty == {hosts[0]}


def test_a_cold_load_derives_what_requests_read(db, hosts, monkeypatch):
    cache = HostStateCache(db)
    cache.table.expect_columns([('running_vms', 0.0, None)])
    cache.refresh()
    # the first request decodes no host's attributes: built already
    decoded = []
    monkeypatch.setattr(cache.table, '_build_columns', decoded.append)
    rows = cache.table.every_row()
    assert list(host_values.free_ram_mb(cache.table, rows)) == list(
        host_values.free_ram_mb(cache.table, rows))
    host_values.vcpus_free(cache.table, rows)
    cache.table.column('running_vms')
    assert decoded == []
    assert {'host_values.free_ram_mb', 'host_values.free_disk_gb',
            'host_values.vcpus_free'} <= set(cache.table.report_columns)


def test_a_provider_renamed_moves_in_the_host_index(db, hosts):
    uuid = '11111111-2222-3333-4444-555555555555'
    fakes.report(db, 'fake-mini', uuid=uuid, disabled=True,
                 updated_at=fakes.NOW)
    cache = HostStateCache(db)
    cache.refresh()
    row = cache.table.rows_of_host('fake-mini')[0]
    fakes.report(db, 'compute', 'fake-mini', uuid=uuid,
                 updated_at=fakes.NOW + datetime.timedelta(seconds=5))
    assert cache.refresh() == 1
    table = cache.table
    assert table.size == 6
    assert table.rows_of_host('compute') == [row]
    assert table.rows_of_host('fake-mini') == []
    assert table.rows_of_node('fake-mini') == [row]
    assert (table.hosts[row], table.nodenames[row]) == (
        'compute', 'fake-mini')
    assert not table.disabled[row]


def test_a_report_under_its_own_name_renames_nothing(db, hosts,
                                                     monkeypatch):
    """The poller asks ``rename_row`` only of the rows whose host or node
    name moved: a report under the same name (every other one) costs no
    Python step per row."""
    cache = HostStateCache(db)
    cache.refresh()
    renamed = []
    real = cache.table.rename_row

    def rename_row(row, host, nodename):
        renamed.append((host, nodename))
        return real(row, host, nodename)
    monkeypatch.setattr(cache.table, 'rename_row', rename_row)
    host = cache.table.hosts[0]
    fakes.report(db, host, vcpus_used=3)
    assert cache.refresh() == 1
    assert renamed == []
