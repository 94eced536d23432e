"""Claims on SQLite: the conditional update never overcommits, a failed
request writes nothing, and releases and syncs restore capacity."""

import datetime

import pytest
from oslo_utils import timeutils

from scheduler.db import claims
from scheduler import exception
from scheduler.model import resource_classes as rcs
from scheduler.db import api as db_api
from scheduler.db import changes
from scheduler.db import provider_reads

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
C2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
C3 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e53'
T0 = datetime.datetime(2026, 3, 1, 12, 0, 0)


def _provider(db, provider_id):
    rows = provider_reads.load_changes(db, provider_ids=[provider_id])
    return rows[0]


def _claimed(db, provider_id, rc=rcs.VCPU):
    return _provider(db, provider_id)['inventories'][rc]['claimed']


def _consumers(db, host=None):
    return sorted({a['consumer_uuid']
                   for a in claims.list_allocations(db, host=host)})


@pytest.fixture
def host(db):
    """One host with exactly 4 VCPUs and 4096 MB to hand out."""
    return fakes.report(db, 'h1', vcpus=4, memory_mb=4096,
                        cpu_allocation_ratio=1.0)


def test_claim_is_written(db, host):
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 3,
                                                        rcs.MEMORY_MB: 512})])
    assert _claimed(db, host) == 3
    assert _claimed(db, host, rcs.MEMORY_MB) == 512
    rows = claims.list_allocations(db)
    assert [(a['consumer_uuid'], a['host'], a['resource_class'],
             a['amount']) for a in rows] == [
        (C1, 'h1', rcs.MEMORY_MB, 512), (C1, 'h1', rcs.VCPU, 3)]
    assert all(a['confirmed_at'] is None for a in rows)


def test_overcommit_is_refused_and_nothing_is_written(db, host):
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 3})])
    with pytest.raises(exception.ClaimConflict) as info:
        claims.claim_resources(db, [claims.Claim(C2, host, {rcs.VCPU: 2})])
    assert info.value.kwargs == {'provider': host,
                                 'resource_class': rcs.VCPU}
    assert _claimed(db, host) == 3
    assert _consumers(db) == [C1]


def test_failed_request_rolls_back_its_earlier_claims(db, host):
    other = fakes.report(db, 'h2', vcpus=4, cpu_allocation_ratio=1.0)
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [
            claims.Claim(C1, other, {rcs.VCPU: 4, rcs.MEMORY_MB: 100}),
            claims.Claim(C2, host, {rcs.VCPU: 5})])
    assert _claimed(db, other) == 0
    assert _claimed(db, other, rcs.MEMORY_MB) == 0
    assert claims.list_allocations(db) == []


def test_two_claims_of_one_request_on_one_host_add_up(db, host):
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 3}),
                                    claims.Claim(C2, host, {rcs.VCPU: 2})])
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 2}),
                                claims.Claim(C2, host, {rcs.VCPU: 2})])
    assert _claimed(db, host) == 4


@pytest.mark.parametrize('reported, claimed, amount, fits', [
    (3, 0, 1, True),
    (3, 0, 2, False),      # the report alone leaves 1
    (0, 3, 2, False),      # the claims alone leave 1
    (3, 1, 1, True),       # usage is max(3, 1), not 3 + 1
    (1, 3, 1, True),
    (2, 2, 2, True),
    (2, 2, 3, False),
])
def test_usage_is_the_larger_of_report_and_claims(db, reported, claimed,
                                                  amount, fits):
    host = fakes.report(db, 'h1', vcpus=4, cpu_allocation_ratio=1.0,
                        vcpus_used=reported)
    if claimed:
        claims.claim_resources(db, [claims.Claim(C1, host,
                                                 {rcs.VCPU: claimed})])
    attempt = [claims.Claim(C2, host, {rcs.VCPU: amount})]
    if fits:
        claims.claim_resources(db, attempt)
        assert _claimed(db, host) == claimed + amount
    else:
        with pytest.raises(exception.ClaimConflict):
            claims.claim_resources(db, attempt)
        assert _claimed(db, host) == claimed


def test_amount_above_max_unit_is_refused(db):
    # 2 VCPUs at ratio 4.0: capacity 8, but one instance may take only 2
    host = fakes.report(db, 'h1', vcpus=2)
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 3})])


def test_claim_on_a_vanished_provider_conflicts(db, host):
    with pytest.raises(exception.ClaimConflict) as info:
        claims.claim_resources(db, [claims.Claim(C1, host + 100,
                                                 {rcs.VCPU: 1})])
    assert info.value.kwargs['provider'] == host + 100


def test_new_claim_replaces_the_consumers_previous_one(db, host):
    other = fakes.report(db, 'h2', vcpus=4, cpu_allocation_ratio=1.0)
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 4})])
    claims.claim_resources(db, [claims.Claim(C1, other, {rcs.VCPU: 1})])
    assert (_claimed(db, host), _claimed(db, other)) == (0, 1)
    assert _consumers(db, host='h1') == []
    assert _consumers(db, host='h2') == [C1]
    # a resize on the same host: the old claim does not count against it
    claims.claim_resources(db, [claims.Claim(C1, other, {rcs.VCPU: 4})])
    assert _claimed(db, other) == 4


def test_delete_allocations_restores_capacity_and_is_idempotent(db, host):
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 4,
                                                        rcs.MEMORY_MB: 64})])
    assert claims.delete_allocations(db, C1) == 2
    assert (_claimed(db, host), _claimed(db, host, rcs.MEMORY_MB)) == (0, 0)
    assert claims.delete_allocations(db, C1) == 0
    assert claims.delete_allocations(db, C2) == 0
    assert _claimed(db, host) == 0
    # the capacity is really back
    claims.claim_resources(db, [claims.Claim(C2, host, {rcs.VCPU: 4})])


def test_sync_confirms_reported_and_releases_only_old_unreported(db, host):
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 1})],
                           now=T0)
    claims.claim_resources(db, [claims.Claim(C2, host, {rcs.VCPU: 1})],
                           now=T0)
    claims.claim_resources(db, [claims.Claim(C3, host, {rcs.VCPU: 1})],
                           now=T0 + datetime.timedelta(seconds=500))
    now = T0 + datetime.timedelta(seconds=601)
    # the host runs C1; C2 never started (claimed 601s ago), C3 is new
    confirmed, released = claims.sync_host_consumers(db, 'h1', [C1], 600,
                                                     now=now)
    assert (confirmed, released) == (1, 1)
    assert _consumers(db) == [C1, C3]
    assert _claimed(db, host) == 2
    [c1] = [a for a in claims.list_allocations(db)
            if a['consumer_uuid'] == C1]
    assert c1['confirmed_at'] == now
    # confirming again changes nothing; C1 is safe even when old
    later = now + datetime.timedelta(hours=1)
    assert claims.sync_host_consumers(db, 'h1', [C1, C3], 600,
                                      now=later) == (1, 0)
    assert claims.sync_host_consumers(db, 'h1', [C1, C3], 600,
                                      now=later) == (0, 0)


def test_sync_only_touches_the_named_host(db, host):
    other = fakes.report(db, 'h2', vcpus=4, cpu_allocation_ratio=1.0)
    claims.claim_resources(db, [claims.Claim(C1, other, {rcs.VCPU: 1})],
                           now=T0)
    assert claims.sync_host_consumers(
        db, 'h1', [], 0, now=T0 + datetime.timedelta(days=1)) == (0, 0)
    assert claims.sync_host_consumers(db, 'unknown', [], 0) == (0, 0)
    assert _consumers(db) == [C1]


def _seen_after(db, mark, provider_id):
    """Does a reader at feed position ``mark`` find ``provider_id``?"""
    rows = provider_reads.load_changes(db, since=mark)
    return provider_id in {r['id'] for r in rows}


def _mark(db):
    with db.reader() as session:
        return changes.position(session)


def test_every_write_is_found_by_a_reader_of_the_feed(db, host):
    later = timeutils.utcnow() + datetime.timedelta(seconds=1)
    writes = [
        lambda: claims.claim_resources(
            db, [claims.Claim(C1, host, {rcs.VCPU: 1})]),
        lambda: claims.claim_resources(
            db, [claims.Claim(C2, host, {rcs.VCPU: 1})]),
        lambda: claims.delete_allocations(db, C1),
        lambda: claims.sync_host_consumers(db, 'h1', [], 0, now=later),
        lambda: fakes.report(db, 'h1', vcpus=4),
    ]
    for write in writes:
        mark = _mark(db)
        assert not _seen_after(db, mark, host)
        write()
        assert _seen_after(db, mark, host)


def test_legacy_counter_is_bumped_only_when_asked(db, host):
    with db.reader() as session:
        before = db_api.current_change_seq(session)
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 1})])
    with db.reader() as session:
        assert db_api.current_change_seq(session) == before
    db.legacy_change_counter = True
    claims.claim_resources(db, [claims.Claim(C2, host, {rcs.VCPU: 1})])
    with db.reader() as session:
        assert db_api.current_change_seq(session) == before + 1
    assert _provider(db, host)['change_seq'] == before + 1


def test_failed_claim_is_not_in_the_feed(db, host):
    before = _provider(db, host)
    mark = _mark(db)
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 5})])
    after = _provider(db, host)
    assert after['generation'] == before['generation']
    assert not _seen_after(db, mark, host)
