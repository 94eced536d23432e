"""Claims nobody confirmed are released after the grace period, on every
host, whether or not its tracker ever calls sync_instance_info."""

import datetime
import logging

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from sqlalchemy import exc as sa_exc

from scheduler.service import claim_sweeper
from scheduler.db import claims
from scheduler.model import resource_classes as rcs
from scheduler.service import composition
from scheduler.db import provider_reads

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
C2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
C3 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e53'
T0 = datetime.datetime(2026, 3, 1, 12, 0, 0)


def _claim(db, consumer, provider, seconds):
    claims.claim_resources(db, [claims.Claim(consumer, provider,
                                             {rcs.VCPU: 1})],
                           now=T0 + datetime.timedelta(seconds=seconds))


def _claimed(db, provider_id):
    [row] = provider_reads.load_changes(db, provider_ids=[provider_id])
    return row['inventories'][rcs.VCPU]['claimed']


def _consumers(db):
    return sorted({a['consumer_uuid'] for a in claims.list_allocations(db)})


def test_unconfirmed_claims_past_the_grace_period_are_released(db):
    h1 = fakes.report(db, 'h1', vcpus=4, cpu_allocation_ratio=1.0)
    h2 = fakes.report(db, 'h2', vcpus=4, cpu_allocation_ratio=1.0)
    _claim(db, C1, h1, 0)        # orphan: its caller never got it
    _claim(db, C2, h2, 0)        # confirmed by h2's tracker
    claims.sync_host_consumers(db, 'h2', [C2], 600,
                               now=T0 + datetime.timedelta(seconds=10))
    _claim(db, C3, h1, 500)      # recent: its instance may be booting
    now = T0 + datetime.timedelta(seconds=601)
    assert claims.release_unconfirmed(db, 600, now=now) == 1
    assert _consumers(db) == [C2, C3]
    assert (_claimed(db, h1), _claimed(db, h2)) == (1, 1)
    assert claims.release_unconfirmed(db, 600, now=now) == 0


def test_the_sweep_stays_within_its_limit(db):
    h1 = fakes.report(db, 'h1', vcpus=4, cpu_allocation_ratio=1.0)
    _claim(db, C1, h1, 0)
    _claim(db, C2, h1, 0)
    later = T0 + datetime.timedelta(hours=1)
    assert claims.release_unconfirmed(db, 600, now=later, limit=1) == 1
    assert claims.release_unconfirmed(db, 600, now=later, limit=1) == 1
    assert _consumers(db) == []


def test_every_worker_sweeps_at_a_quarter_of_the_grace_period(conf, db):
    parts = composition.build(conf, db=db)
    try:
        assert parts.claim_sweeper.interval == 150.0
        assert parts.claim_sweeper._thread.is_alive()
    finally:
        parts.claim_sweeper.stop()
        parts.host_cache.stop()


def test_a_sweeper_releases_what_is_due(db):
    h1 = fakes.report(db, 'h1', vcpus=4, cpu_allocation_ratio=1.0)
    claims.claim_resources(db, [claims.Claim(C1, h1, {rcs.VCPU: 1})],
                           now=timeutils.utcnow() - datetime.timedelta(
                               seconds=61))
    assert claim_sweeper.ClaimSweeper(db, 60).sweep() == 1
    assert _consumers(db) == []


def test_a_zero_grace_period_starts_no_sweep(db):
    sweeper = claim_sweeper.ClaimSweeper(db, 0)
    sweeper.start()
    assert sweeper._thread is None


def _failing_sweeper(db, results):
    sweeper = claim_sweeper.ClaimSweeper(db, 60)

    def sweep():
        result = results.pop(0)
        if result is not None:
            raise result
    sweeper.sweep = sweep
    return sweeper


def test_a_database_outage_is_one_line_and_its_end_another(db, caplog):
    outage = db_exc.DBConnectionError(sa_exc.OperationalError(
        'SELECT allocations.id FROM allocations', {},
        Exception('FATAL:  database "s1" does not exist')))
    sweeper = _failing_sweeper(db, [outage, outage, outage, None, None])
    with caplog.at_level(logging.INFO,
                         logger='scheduler.service.claim_sweeper'):
        for _ in range(5):
            sweeper.sweep_once()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2, messages
    assert 'database unreachable' in messages[0]
    assert 'does not exist' in messages[0]
    assert 'SELECT' not in messages[0] and not caplog.records[0].exc_info
    assert messages[1] == 'Claim sweep works again'


def test_an_unexpected_error_keeps_its_traceback(db, caplog):
    sweeper = _failing_sweeper(db, [KeyError('bug')])
    with caplog.at_level(logging.INFO,
                         logger='scheduler.service.claim_sweeper'):
        sweeper.sweep_once()
    [record] = caplog.records
    assert record.exc_info and 'Claim sweep failed' in record.getMessage()


def test_stop_ends_the_thread(db):
    sweeper = claim_sweeper.ClaimSweeper(db, 60, interval=0.01)
    sweeper.start()
    sweeper.stop()
    assert not sweeper._thread.is_alive()


def test_a_stopped_manager_sweeps_no_more(conf, db):
    mgr = composition.build_manager(conf, db)
    mgr.stop()
    assert not mgr.claim_sweeper._thread.is_alive()
