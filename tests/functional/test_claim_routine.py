"""Issue 22: a claim's outcomes are the same whichever way it is written.

On PostgreSQL a claim of new consumers runs in one round trip through
``scheduler.db.claim_routine``, on MariaDB in two through
``scheduler.db.claim_procedure``; on SQLite (and without the routine)
it is the transaction of ``scheduler.db.claims._claim``. Every
case here runs on each database, so both paths are held to one answer:
what is written on success, what a loss names, and that a loss leaves
nothing behind (no allocation, no usage, no generation moved, no
position of the feed moved).
"""

import logging
import threading

import pytest
import sqlalchemy as sa
from oslo_utils import uuidutils

from scheduler import exception
from scheduler import objects
from scheduler.db import changes
from scheduler.db import claim_routine
from scheduler.db import claim_routines
from scheduler.db import claims
from scheduler.db import models
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler.model import resource_classes as rcs
from tests.functional import databases

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
SMALL = {rcs.VCPU: 1, rcs.MEMORY_MB: 512, rcs.DISK_GB: 1}

pytestmark = pytest.mark.parametrize('backend', databases.BACKENDS)


def _providers(db, hosts, vcpus=8):
    for host in hosts:
        db_providers.record_compute_node(
            db, objects.ComputeNode.from_stats(host, host, {
                'vcpus': vcpus, 'memory_mb': 8192, 'local_gb': 100}),
            RATIOS)
    return [provider_reads.find_provider(db, h)['id'] for h in hosts]


def _state(db):
    """Everything a claim may change: generations and stamps, usage,
    allocations, the feed's position."""
    P, INV, ALLOC = models.providers, models.inventories, models.allocations
    with db.engine.connect() as connection:
        return {
            'providers': connection.execute(sa.select(
                P.c.id, P.c.generation, P.c.feed_stripe, P.c.feed_seq)
                .order_by(P.c.id)).all(),
            'usage': connection.execute(sa.select(
                INV.c.provider_id, INV.c.resource_class, INV.c.claimed)
                .order_by(INV.c.id)).all(),
            'allocations': connection.execute(sa.select(
                ALLOC.c.consumer_uuid, ALLOC.c.provider_id,
                ALLOC.c.resource_class, ALLOC.c.amount)
                .order_by(ALLOC.c.id)).all(),
            'position': changes.position(connection)}


def _claim(db, *pairs):
    """One consumer per (provider, resources) pair, in one request."""
    wanted = [claims.Claim(uuidutils.generate_uuid(), provider, resources,
                           'h%d' % provider)
              for provider, resources in pairs]
    claims.claim_resources(db, wanted)
    return wanted


def _quiet(caplog):
    """No log line at ERROR or above (oslo.db logs the errors it does
    not know, with their traceback)."""
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.ERROR]


def test_a_claim_writes_usage_allocations_generation_and_stamp(database):
    first, second = _providers(database, ['h1', 'h2'])
    before = _state(database)
    wanted = _claim(database, (first, SMALL), (second, {rcs.VCPU: 2}))
    after = _state(database)
    generations = {p: g for p, g, _, _ in before['providers']}
    assert {p: g for p, g, _, _ in after['providers']} == {
        p: g + 1 for p, g in generations.items()}
    stamps = {(s, q) for _, _, s, q in after['providers']}
    assert len(stamps) == 1   # one transaction, one stripe value
    stripe, seq = stamps.pop()
    assert after['position'].stripes[stripe] == seq
    assert before['position'].moved(after['position'])
    claimed = {(p, rc): c for p, rc, c in after['usage']}
    assert claimed[(first, rcs.MEMORY_MB)] == 512
    assert claimed[(second, rcs.VCPU)] == 2
    assert claimed[(second, rcs.MEMORY_MB)] == 0
    assert sorted(after['allocations']) == sorted(
        (c.consumer_uuid, c.provider_id, rc, amount)
        for c in wanted for rc, amount in c.resources.items())
    if database.engine.dialect.name != 'sqlite':
        assert claim_routines.of(database) is not None


def test_a_row_that_does_not_fit_leaves_nothing_behind(database, caplog):
    first, second = _providers(database, ['h1', 'h2'], vcpus=2)
    _claim(database, (second, {rcs.VCPU: 2}))
    before = _state(database)
    # the first provider's rows fit and come first; the second is full
    with pytest.raises(exception.ClaimConflict) as info:
        _claim(database, (first, SMALL), (second, SMALL))
    assert info.value.kwargs['provider'] == second
    assert info.value.kwargs['resource_class'] == rcs.VCPU
    assert _state(database) == before
    assert _quiet(caplog) == []


def _memory_in_units_of_256(db):
    """One provider whose memory is claimed in steps of 256 MB, from 256
    to 2048 MB (its id)."""
    provider, = _providers(db, ['h1'])
    with db.engine.begin() as connection:
        connection.execute(
            sa.update(models.inventories)
            .where(models.inventories.c.resource_class == rcs.MEMORY_MB)
            .values(step_size=256, min_unit=256, max_unit=2048))
    return provider


def test_the_unit_rules_hold_at_claim_time(database, caplog):
    provider = _memory_in_units_of_256(database)
    before = _state(database)
    for amount in (128, 384, 4096):   # below min, off step, above max
        with pytest.raises(exception.ClaimConflict):
            _claim(database, (provider, {rcs.MEMORY_MB: amount}))
        assert _state(database) == before, amount
    _claim(database, (provider, {rcs.MEMORY_MB: 512}))
    assert _quiet(caplog) == []


def test_the_unit_rules_hold_for_each_consumer_of_a_row(database, caplog):
    """Two consumers on one row: each amount meets the rules, not only
    their sum (the function is sent each row's smallest, largest and
    gcd; for a row of one consumer it takes the amount)."""
    provider = _memory_in_units_of_256(database)
    before = _state(database)
    # 384 each is off step, though the sum (768) is on it
    with pytest.raises(exception.ClaimConflict):
        _claim(database, (provider, {rcs.MEMORY_MB: 384}),
               (provider, {rcs.MEMORY_MB: 384}))
    assert _state(database) == before
    _claim(database, (provider, {rcs.MEMORY_MB: 256}),
           (provider, {rcs.MEMORY_MB: 512}))
    assert sorted(a for _, _, rc, a in _state(database)['allocations']
                  if rc == rcs.MEMORY_MB) == [256, 512]
    assert _quiet(caplog) == []


def test_a_zero_amount_is_allocated_and_takes_nothing(database):
    provider, = _providers(database, ['h1'])
    [wanted] = _claim(database, (provider, {rcs.VCPU: 1, rcs.DISK_GB: 0}))
    state = _state(database)
    assert sorted(state['allocations']) == [
        (wanted.consumer_uuid, provider, rcs.DISK_GB, 0),
        (wanted.consumer_uuid, provider, rcs.VCPU, 1)]
    assert {(rc, c) for _, rc, c in state['usage']} == {
        (rcs.VCPU, 1), (rcs.MEMORY_MB, 0), (rcs.DISK_GB, 0)}


def test_a_claim_on_a_provider_that_is_gone_names_it(database, caplog):
    kept, gone = _providers(database, ['h1', 'h2'])
    with database.engine.begin() as connection:
        connection.execute(sa.delete(models.providers)
                           .where(models.providers.c.id == gone))
    before = _state(database)
    with pytest.raises(exception.ClaimConflict) as info:
        _claim(database, (kept, SMALL), (gone, SMALL))
    assert info.value.kwargs == {'provider': gone,
                                 'resource_class': '(deleted)'}
    assert _state(database) == before
    assert _quiet(caplog) == []


def test_a_claim_overlapping_one_of_its_consumers_waits_and_one_stands(
        database, monkeypatch):
    """The function's backend goes on when its worker dies mid-call, and
    the call delivered again to another worker may plan another host:
    that claim waits for the first (the consumers' locks), then finds the
    consumer's claim (the probe, after the locks) and replaces it. One
    claim stands; the probe inside the lock's UPDATE read the snapshot
    from before the wait, and both were written."""
    if claim_routines.of(database) is not claim_routine:
        pytest.skip('the claim function is PostgreSQL\'s')
    first, second = _providers(database, ['h1', 'h2'])
    consumer = uuidutils.generate_uuid()
    # the first claim, its transaction left open (its worker is gone)
    connection = database.engine.connect()
    transaction = connection.begin()
    monkeypatch.setattr(database.driver_calls, 'scalar', lambda sql, params:
                        connection.exec_driver_sql(sql, params).scalar())
    claims.claim_resources(database, [claims.Claim(consumer, first, SMALL,
                                                   'h1')])
    monkeypatch.undo()
    outcome = []

    def again():
        try:
            claims.claim_resources(database, [claims.Claim(
                consumer, second, SMALL, 'h2')])
            outcome.append('claimed')
        except Exception as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)
    overlapping = threading.Thread(target=again)
    overlapping.start()
    overlapping.join(1.0)
    try:
        assert overlapping.is_alive(), 'it did not wait: %s' % outcome
    finally:
        transaction.commit()
        connection.close()
        overlapping.join(30)
    assert outcome == ['claimed']
    state = _state(database)
    assert {(c, p) for c, p, _, _ in state['allocations']} == {
        (consumer, second)}
    assert sum(claimed for provider, rc, claimed in state['usage']
               if rc == rcs.VCPU) == 1


def test_a_claim_waits_for_a_writer_holding_its_provider(database):
    """The claim function locks a provider with ``SELECT ... FOR NO KEY
    UPDATE`` and bumps its generation with the stamp; every other writer
    locks it with an UPDATE (``changes.Change.lock_providers``). The two
    exclude each other, and the claim waits before it touches an
    inventory row (the lock order: providers, then inventories): it
    claims after the writer's COMMIT, and the generation counts both."""
    [provider] = _providers(database, ['h1'])
    before = dict((p, g) for p, g, _, _ in _state(database)['providers'])
    outcome = []

    def claim():
        try:
            _claim(database, (provider, SMALL))
            outcome.append('claimed')
        except Exception as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)
    claiming = threading.Thread(target=claim)
    with changes.write(database) as change:
        change.lock_providers([provider])
        change.providers([provider])
        claiming.start()
        claiming.join(1.0)
        assert claiming.is_alive(), 'it did not wait: %s' % outcome
        if database.engine.dialect.name != 'sqlite':  # one writer there
            _lock_inventories_at_once(database, provider)
    claiming.join(30)
    assert outcome == ['claimed']
    [(_, generation, _, _)] = _state(database)['providers']
    assert generation == before[provider] + 2


def _lock_inventories_at_once(db, provider):
    """Lock the provider's inventory rows, or fail at once if another
    transaction holds them."""
    INV = models.inventories
    with db.engine.connect() as connection, connection.begin() as inner:
        connection.execute(sa.select(INV.c.id).where(
            INV.c.provider_id == provider).with_for_update(nowait=True))
        inner.rollback()
