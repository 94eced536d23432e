"""Hard server-group policies enforced when claims are written: a claim
that would break the group raises GroupPolicyConflict and writes nothing;
releasing claims forgets the membership."""

import datetime
import threading

import pytest
import sqlalchemy as sa

from scheduler.db import claims
from scheduler import exception
from scheduler.model import resource_classes as rcs
from scheduler.db import groups as db_groups
from scheduler.db import models

from .. import fakes

C = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5%d' % i for i in range(5)]
GROUP = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f'
OTHER_GROUP = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e40'
T0 = datetime.datetime(2026, 3, 1, 12, 0, 0)
ONE_VCPU = {rcs.VCPU: 1}


@pytest.fixture
def providers(db):
    """host name -> provider id, for h1..h3."""
    return {h: fakes.report(db, h) for h in ('h1', 'h2', 'h3')}


def _claim(providers, consumer, host):
    return claims.Claim(consumer, providers[host], ONE_VCPU, host=host)


def _members(db, group=GROUP):
    """{consumer: host} of the group as the database holds it."""
    gm = models.group_members
    with db.reader() as session:
        return dict(session.execute(
            sa.select(gm.c.consumer_uuid, gm.c.host)
            .where(gm.c.group_uuid == group)).all())


def _consumers(db):
    return sorted({a['consumer_uuid'] for a in claims.list_allocations(db)})


def _place(db, providers, policy, placements, max_per_host=1, **kwargs):
    """Claim (consumer, host) pairs in one transaction under the group."""
    claims.claim_resources(
        db, [_claim(providers, c, h) for c, h in placements],
        group=claims.GroupPolicy(GROUP, policy, max_per_host), **kwargs)


CONFLICTS = [
    # (id, policy, max per host, placed before, placed now, crowded hosts)
    ('anti-affinity: host taken', 'anti-affinity', 1,
     [(C[0], 'h1')], [(C[1], 'h1')], 'h1'),
    ('anti-affinity: two at once on one host', 'anti-affinity', 1,
     [], [(C[0], 'h2'), (C[1], 'h2')], 'h2'),
    ('anti-affinity: max_server_per_host=2 full', 'anti-affinity', 2,
     [(C[0], 'h1'), (C[1], 'h1')], [(C[2], 'h1'), (C[3], 'h3')], 'h1'),
    ('affinity: other host than the group', 'affinity', 1,
     [(C[0], 'h1')], [(C[1], 'h2')], 'h1, h2'),
    ('affinity: two hosts at once', 'affinity', 1,
     [], [(C[0], 'h1'), (C[1], 'h3')], 'h1, h3'),
]


@pytest.mark.parametrize('policy, max_per_host, before, now, crowded',
                         [c[1:] for c in CONFLICTS],
                         ids=[c[0] for c in CONFLICTS])
def test_conflict_writes_nothing(db, providers, policy, max_per_host,
                                 before, now, crowded):
    if before:
        _place(db, providers, policy, before, max_per_host)
    snapshot = (_members(db), _consumers(db), claims.list_allocations(db))
    with pytest.raises(exception.GroupPolicyConflict) as info:
        _place(db, providers, policy, now, max_per_host)
    assert info.value.kwargs == {'group': GROUP, 'policy': policy,
                                 'hosts': crowded}
    # a ClaimConflict too: the driver re-plans with fresh members
    assert isinstance(info.value, exception.ClaimConflict)
    assert (_members(db), _consumers(db),
            claims.list_allocations(db)) == snapshot


ALLOWED = [
    ('anti-affinity: distinct hosts', 'anti-affinity', 1,
     [(C[0], 'h1')], [(C[1], 'h2'), (C[2], 'h3')]),
    ('anti-affinity: max_server_per_host=2', 'anti-affinity', 2,
     [(C[0], 'h1')], [(C[1], 'h1'), (C[2], 'h2'), (C[3], 'h2')]),
    ('affinity: same host', 'affinity', 1,
     [(C[0], 'h2')], [(C[1], 'h2'), (C[2], 'h2')]),
]


@pytest.mark.parametrize('policy, max_per_host, before, now',
                         [c[1:] for c in ALLOWED],
                         ids=[c[0] for c in ALLOWED])
def test_members_are_recorded(db, providers, policy, max_per_host, before,
                              now):
    _place(db, providers, policy, before, max_per_host)
    _place(db, providers, policy, now, max_per_host)
    assert _members(db) == dict(before + now)
    assert _consumers(db) == sorted(c for c, _ in before + now)


def test_groups_do_not_see_each_other(db, providers):
    _place(db, providers, 'anti-affinity', [(C[0], 'h1')])
    claims.claim_resources(db, [_claim(providers, C[1], 'h1')],
                           group=claims.GroupPolicy(OTHER_GROUP,
                                                    'anti-affinity'))
    assert _members(db) == {C[0]: 'h1'}
    assert _members(db, OTHER_GROUP) == {C[1]: 'h1'}


def test_claim_without_group_records_no_member(db, providers):
    claims.claim_resources(db, [_claim(providers, C[0], 'h1')])
    assert _members(db) == {}


def test_group_row_is_created_then_locked(db, providers):
    groups = models.instance_groups

    def row():
        with db.reader() as session:
            return session.execute(sa.select(
                groups.c.policy, groups.c.generation)
                .where(groups.c.uuid == GROUP)).one()

    _place(db, providers, 'anti-affinity', [(C[0], 'h1')])
    assert row() == ('anti-affinity', 0)
    _place(db, providers, 'anti-affinity', [(C[1], 'h2')])
    assert row() == ('anti-affinity', 1)


def test_rescheduled_member_moves_without_counting_itself(db, providers):
    _place(db, providers, 'anti-affinity', [(C[0], 'h1'), (C[1], 'h2')])
    # C[0] moves to h3: its own old place does not count against it
    _place(db, providers, 'anti-affinity', [(C[0], 'h3')])
    assert _members(db) == {C[0]: 'h3', C[1]: 'h2'}
    # ... and h1 is free for another member again
    _place(db, providers, 'anti-affinity', [(C[2], 'h1')])
    assert db_groups.member_hosts(db, GROUP) == {'h1': 1, 'h2': 1,
                                                 'h3': 1}


def test_member_hosts_can_exclude_consumers(db, providers):
    _place(db, providers, 'anti-affinity', [(C[0], 'h1'), (C[1], 'h1')],
           max_per_host=2)
    assert db_groups.member_hosts(db, GROUP) == {'h1': 2}
    assert db_groups.member_hosts(db, GROUP,
                                  exclude_consumers=[C[1]]) == {'h1': 1}
    assert db_groups.member_hosts(db, OTHER_GROUP) == {}


def test_delete_allocations_forgets_the_member(db, providers):
    _place(db, providers, 'anti-affinity', [(C[0], 'h1'), (C[1], 'h2')])
    assert claims.delete_allocations(db, C[0]) == 1
    assert _members(db) == {C[1]: 'h2'}
    # the host is free for the group again
    _place(db, providers, 'anti-affinity', [(C[2], 'h1')])


def test_sync_forgets_members_of_stale_claims_only(db, providers):
    _place(db, providers, 'anti-affinity', [(C[0], 'h1')], now=T0)
    _place(db, providers, 'anti-affinity', [(C[1], 'h2')], now=T0)
    _place(db, providers, 'anti-affinity', [(C[2], 'h3')], now=T0)
    later = T0 + datetime.timedelta(seconds=601)
    # h1 runs C[0]; h2 runs nothing: C[1]'s claim is stale
    assert claims.sync_host_consumers(db, 'h1', [C[0]], 600,
                                      now=later) == (1, 0)
    assert claims.sync_host_consumers(db, 'h2', [], 600,
                                      now=later) == (0, 1)
    assert _members(db) == {C[0]: 'h1', C[2]: 'h3'}
    # too recent to be stale: kept
    assert claims.sync_host_consumers(db, 'h3', [], 600,
                                      now=T0) == (0, 0)
    assert C[2] in _members(db)


@pytest.mark.parametrize('policy, hosts', [
    ('anti-affinity', ('h1', 'h1')),
    ('affinity', ('h1', 'h2')),
])
def test_concurrent_members_cannot_both_break_the_policy(
        db, other_db, providers, policy, hosts):
    # two workers (two connection pools) place members of a new group at
    # once; the group row serializes them and the second one loses
    barrier = threading.Barrier(2)
    outcomes = [None, None]

    def place(index, database):
        barrier.wait()
        try:
            _place(database, providers, policy,
                   [(C[index], hosts[index])])
            outcomes[index] = 'placed'
        except exception.GroupPolicyConflict:
            outcomes[index] = 'conflict'

    threads = [threading.Thread(target=place, args=(i, d))
               for i, d in enumerate((db, other_db))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ['conflict', 'placed']
    winner = outcomes.index('placed')
    assert _members(db) == {C[winner]: hosts[winner]}
    assert _consumers(db) == [C[winner]]
