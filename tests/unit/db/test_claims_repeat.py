"""A repeated request (a redelivered call, a caller's retry) gets the
claims it already holds, never a second set: ``claims.held_claims``
recognises the repeat and names the hosts held; anything else is no
repeat and is planned, then claimed, anew."""

import time

import pytest

from scheduler import exception
from scheduler.db import claims
from scheduler.model import call as model_call
from scheduler.model import resource_classes as rcs

from .. import fakes

C1 = '7a1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
C2 = '7a1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
TINY = {rcs.VCPU: 1, rcs.MEMORY_MB: 64}


@pytest.fixture
def hosts(db):
    return [fakes.report(db, name, vcpus=4, memory_mb=4096,
                         cpu_allocation_ratio=1.0) for name in ('h1', 'h2')]


def _rows(db):
    return sorted((a['consumer_uuid'], a['host'], a['resource_class'],
                   a['amount']) for a in claims.list_allocations(db))


def test_a_repeat_gets_the_hosts_it_holds_and_writes_nothing(db, hosts):
    claims.claim_resources(db, [claims.Claim(C1, hosts[0], TINY, 'h1'),
                                claims.Claim(C2, hosts[1], TINY, 'h2')])
    before = _rows(db)
    held = claims.held_claims(db, [C2, C1], dict(TINY, DISK_GB=0))
    assert [(c.consumer_uuid, c.host, c.provider_id) for c in held] == [
        (C2, 'h2', hosts[1]), (C1, 'h1', hosts[0])]
    assert held[0].resources == TINY
    assert _rows(db) == before      # restamped, nothing claimed again


@pytest.mark.parametrize('case', ['none held', 'one of two held',
                                  'other amounts', 'confirmed'])
def test_anything_else_is_no_repeat(db, hosts, case):
    if case != 'none held':
        claims.claim_resources(db, [claims.Claim(C1, hosts[0], TINY,
                                                 'h1')])
    if case == 'confirmed':
        claims.sync_host_consumers(db, 'h1', [C1], 600)
    consumers = [C1, C2] if case == 'one of two held' else [C1]
    wanted = dict(TINY, VCPU=2) if case == 'other amounts' else TINY
    assert claims.held_claims(db, consumers, wanted) is None


def test_a_repeat_claimed_again_keeps_one_set(db, hosts):
    """What a worker that does not check for a repeat writes: the claims
    move, and there is still one set (no overcommit, no orphan)."""
    claims.claim_resources(db, [claims.Claim(C1, hosts[0], TINY, 'h1')])
    claims.claim_resources(db, [claims.Claim(C1, hosts[1], TINY, 'h2')])
    assert _rows(db) == [(C1, 'h2', rcs.MEMORY_MB, 64),
                         (C1, 'h2', rcs.VCPU, 1)]


def _capacity_claimed(db, provider):
    return {a['resource_class']: a['amount']
            for a in claims.list_allocations(db)
            if a['provider_id'] == provider}


def test_a_late_calls_claims_are_released_unless_a_repeat_took_them(
        db, hosts):
    """A call whose answer went out after its caller stopped waiting
    gives back what it wrote (``release_written``), but never claims
    that a repeated request was answered with since: the repeat stamps
    them anew."""
    first = model_call.Call()
    claims.claim_resources(db, [claims.Claim(C1, hosts[0], TINY, 'h1'),
                                claims.Claim(C2, hosts[1], TINY, 'h2')],
                           call=first)
    first = first.written
    assert sorted(w.consumer_uuid for w in first) == [C1, C2]
    # the caller retried C1's request alone and got the claim held
    repeat = model_call.Call()
    held = claims.held_claims(db, [C1], TINY, call=repeat)
    repeat = repeat.written
    assert [c.host for c in held] == ['h1']
    assert [w.consumer_uuid for w in repeat] == [C1]
    assert claims.release_written(db, first) == 2     # C2's two rows
    assert _rows(db) == [(C1, 'h1', rcs.MEMORY_MB, 64),
                         (C1, 'h1', rcs.VCPU, 1)]
    assert _capacity_claimed(db, hosts[1]) == {}
    # the repeat's own record still releases it; twice is a no-op
    assert claims.release_written(db, repeat) == 2
    assert claims.release_written(db, repeat) == 0
    assert _rows(db) == []


def test_a_confirmed_claim_is_never_released_as_late(db, hosts):
    call = model_call.Call()
    claims.claim_resources(db, [claims.Claim(C1, hosts[0], TINY, 'h1')],
                           call=call)
    written = call.written
    claims.sync_host_consumers(db, 'h1', [C1], 600)
    assert claims.release_written(db, written) == 0
    assert len(_rows(db)) == 2


def test_a_repeat_whose_claims_were_released_meanwhile_is_planned_anew(
        db, hosts, monkeypatch):
    call = model_call.Call()
    claims.claim_resources(db, [claims.Claim(C1, hosts[0], TINY, 'h1')],
                           call=call)
    written = call.written
    real = claims._restamp

    def released_first(db_, rows, call, now=None):
        claims.release_written(db, written)
        return real(db_, rows, call, now)
    monkeypatch.setattr(claims, '_restamp', released_first)
    assert claims.held_claims(db, [C1], TINY) is None
    assert _rows(db) == []


def test_a_call_past_its_deadline_claims_nothing(db, hosts):
    """A call its caller stopped waiting for (a worker cut off the
    network takes it up again minutes later) writes no claim, on each
    try: ``CallerGaveUp``."""
    gone = model_call.Call(deadline=time.monotonic() - 1)
    with pytest.raises(exception.CallerGaveUp):
        claims.claim_resources(
            db, [claims.Claim(C1, hosts[0], TINY, 'h1')], call=gone)
    assert gone.written == [] and _rows(db) == []
    # a deadline still ahead changes nothing
    ahead = model_call.Call(deadline=time.monotonic() + 60)
    claims.claim_resources(db, [claims.Claim(C1, hosts[0], TINY, 'h1')],
                           call=ahead)
    assert len(_rows(db)) == 2 and len(ahead.written) == 1


def test_a_stale_delivery_does_not_take_over_the_answered_claims(db, hosts):
    """Seen in a 5-minute network cut of a scheduler host: the call was
    answered by another worker (a repeat, which stamped the claims as
    its own); the cut worker then took the same call up again, past its
    caller's deadline. It must not stamp them as its own, or its late
    reply's release would give back the claims the caller was told of."""
    claims.claim_resources(db, [claims.Claim(C1, hosts[0], TINY, 'h1')])
    answered = model_call.Call()
    assert claims.held_claims(db, [C1], TINY, call=answered) is not None
    answered = answered.written
    late = model_call.Call(deadline=time.monotonic() - 1)
    with pytest.raises(exception.CallerGaveUp):
        claims.held_claims(db, [C1], TINY, call=late)
    with pytest.raises(exception.CallerGaveUp):
        claims.claim_resources(
            db, [claims.Claim(C1, hosts[1], TINY, 'h2')], call=late,
            unless_held=True)
    stale = late.written
    assert stale == []
    assert claims.release_written(db, stale) == 0
    # the answered delivery still owns them
    assert claims.release_written(db, answered) == 2
    assert _rows(db) == []
