"""A repeated request (a redelivered call, a caller's retry) gets the
claims it already holds, never a second set: ``claims.held_claims``
recognises the repeat and names the hosts held; anything else is no
repeat and is planned, then claimed, anew."""

import pytest

from scheduler.db import claims
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
    assert _rows(db) == before


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
