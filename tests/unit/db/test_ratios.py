"""Allocation ratios from aggregate metadata, with ``[scheduler]
aggregate_allocation_ratios`` on: they override the tracker's ratio in
``inventories.allocation_ratio`` and ``capacity`` (so planner and claim
agree), for member hosts only, until the host leaves. Off (the default,
as Nova): test_ratios_nova.py."""

import datetime

import pytest

from scheduler.db import claims
from scheduler import exception
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.db import aggregates as db_aggregates
from scheduler.db import provider_reads
from scheduler.host_state import HostStateCache

from .. import fakes

A1 = '1a2b3c4d-0000-4000-8000-000000000001'
A2 = '1a2b3c4d-0000-4000-8000-000000000002'
C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
LATER = datetime.datetime(2030, 1, 1)

# fakes.HOST_SHAPE: 8 VCPUs, 16384 MB, 500 GB; tracker ratios below
REPORTED = {'cpu_allocation_ratio': 4.0, 'ram_allocation_ratio': 1.5}


def _save(db, uuid, hosts, **metadata):
    db_aggregates.save_aggregates(db, [objects.Aggregate(
        uuid=uuid, hosts=list(hosts), metadata=metadata)])


def _inventory(db, host, rc=rcs.VCPU):
    provider_id = provider_reads.find_provider(db, host)['id']
    [provider] = provider_reads.load_changes(db, provider_ids=[provider_id])
    inventory = provider['inventories'][rc]
    return inventory['allocation_ratio'], inventory['capacity']


@pytest.fixture(autouse=True)
def aggregate_ratios_on(conf):
    conf.set_override('aggregate_allocation_ratios', True, 'scheduler')


@pytest.fixture
def hosts(db):
    return {h: fakes.report(db, h, **REPORTED) for h in ('h1', 'h2')}


OVERRIDES = [
    # (id, aggregates as (uuid, hosts, metadata), rc, h1 and h2 results)
    ('cpu ratio on members', [(A1, ['h1'], {'cpu_allocation_ratio': '2'})],
     rcs.VCPU, (2.0, 16), (4.0, 32)),
    ('ram ratio', [(A1, ['h1', 'h2'], {'ram_allocation_ratio': '1.0'})],
     rcs.MEMORY_MB, (1.0, 16384), (1.0, 16384)),
    ('disk ratio', [(A1, ['h2'], {'disk_allocation_ratio': '2.0'})],
     rcs.DISK_GB, (1.0, 500), (2.0, 1000)),
    ('a ratio above the tracker\'s', [(A1, ['h1'],
                                       {'cpu_allocation_ratio': '16'})],
     rcs.VCPU, (16.0, 128), (4.0, 32)),
    ('smallest of several aggregates wins',
     [(A1, ['h1', 'h2'], {'cpu_allocation_ratio': '3'}),
      (A2, ['h2'], {'cpu_allocation_ratio': '1'})],
     rcs.VCPU, (3.0, 24), (1.0, 8)),
    ('bad and non-positive values are ignored',
     [(A1, ['h1'], {'cpu_allocation_ratio': 'x'}),
      (A2, ['h2'], {'cpu_allocation_ratio': '0'})],
     rcs.VCPU, (4.0, 32), (4.0, 32)),
    ('other classes keep the tracker ratio',
     [(A1, ['h1'], {'cpu_allocation_ratio': '2'})],
     rcs.MEMORY_MB, (1.5, 24576), (1.5, 24576)),
]


@pytest.mark.parametrize('aggregates, rc, h1, h2',
                         [c[1:] for c in OVERRIDES],
                         ids=[c[0] for c in OVERRIDES])
def test_aggregate_overrides_the_ratio(db, hosts, aggregates, rc, h1, h2):
    for uuid, members, metadata in aggregates:
        _save(db, uuid, members, **metadata)
    assert (_inventory(db, 'h1', rc), _inventory(db, 'h2', rc)) == (h1, h2)


def test_leaving_the_aggregate_restores_the_tracker_ratio(db, hosts):
    _save(db, A1, ['h1'], cpu_allocation_ratio='2')
    _save(db, A1, ['h2'], cpu_allocation_ratio='2')
    assert _inventory(db, 'h1') == (4.0, 32)
    assert _inventory(db, 'h2') == (2.0, 16)


@pytest.mark.parametrize('undo', ['delete', 'drop the key'])
def test_removing_the_ratio_restores_the_tracker_ratio(db, hosts, undo):
    _save(db, A1, ['h1'], cpu_allocation_ratio='2')
    if undo == 'delete':
        db_aggregates.delete_aggregate(db, A1)
    else:
        _save(db, A1, ['h1'], ssd='true')
    assert _inventory(db, 'h1') == (4.0, 32)


def test_tracker_report_keeps_the_override(db, hosts):
    _save(db, A1, ['h1'], cpu_allocation_ratio='2')
    fakes.report(db, 'h1', updated_at=LATER, vcpus=16,
                 cpu_allocation_ratio=8.0)
    assert _inventory(db, 'h1') == (2.0, 32)
    # ... and the tracker's new ratio applies once the aggregate goes
    db_aggregates.delete_aggregate(db, A1)
    assert _inventory(db, 'h1') == (8.0, 128)


def test_new_host_in_the_aggregate_gets_the_override(db):
    _save(db, A1, ['late'], cpu_allocation_ratio='1')
    fakes.report(db, 'late', **REPORTED)
    assert _inventory(db, 'late') == (1.0, 8)


def test_claims_are_checked_against_the_overridden_capacity(db, hosts):
    _save(db, A1, ['h1'], cpu_allocation_ratio='1')
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [claims.Claim(C1, hosts['h1'],
                                                 {rcs.VCPU: 9})])
    claims.claim_resources(db, [claims.Claim(C1, hosts['h1'],
                                             {rcs.VCPU: 8})])


def test_workers_see_the_new_capacity(db, hosts):
    cache = HostStateCache(db)
    cache.refresh()
    row = cache.table.row_of(hosts['h1'])
    assert cache.table.view(row).capacity(rcs.VCPU) == 32
    _save(db, A1, ['h1'], cpu_allocation_ratio='2')
    assert cache.refresh() == 1
    view = cache.table.view(row)
    assert (view.capacity(rcs.VCPU), view.allocation_ratio(rcs.VCPU)) == \
        (16, 2.0)
