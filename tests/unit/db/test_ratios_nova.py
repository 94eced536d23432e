"""With ``[scheduler] aggregate_allocation_ratios`` at its default (off),
aggregate ratio metadata changes no stored capacity, as in Nova 34: the
tracker's ratios decide, for the filters and for the claim alike."""

import datetime

import pytest

from scheduler.db import claims
from scheduler import exception
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.db import aggregates as db_aggregates
from scheduler.db import api as db_api
from scheduler.db import provider_reads

from .. import fakes

A1 = '1a2b3c4d-0000-4000-8000-000000000001'
LATER = datetime.datetime(2030, 1, 1)
# fakes.HOST_SHAPE: 8 VCPUs; the tracker's ratio 4.0 gives 32
REPORTED = {'cpu_allocation_ratio': 4.0}


def _save(db, hosts, **metadata):
    db_aggregates.save_aggregates(db, [objects.Aggregate(
        uuid=A1, hosts=list(hosts), metadata=metadata)])


def _vcpu(db, host):
    provider_id = provider_reads.find_provider(db, host)['id']
    [provider] = provider_reads.load_changes(db, provider_ids=[provider_id])
    inventory = provider['inventories'][rcs.VCPU]
    return inventory['allocation_ratio'], inventory['capacity']


def test_the_option_is_off_by_default(conf):
    assert conf.scheduler.aggregate_allocation_ratios is False


def test_aggregate_metadata_leaves_the_tracker_ratio(db):
    fakes.report(db, 'h1', **REPORTED)
    _save(db, ['h1', 'late'], cpu_allocation_ratio='1')
    fakes.report(db, 'late', **REPORTED)
    assert _vcpu(db, 'h1') == (4.0, 32)
    assert _vcpu(db, 'late') == (4.0, 32)


def test_claims_use_the_tracker_capacity(db):
    provider = fakes.report(db, 'h1', **REPORTED)
    _save(db, ['h1'], cpu_allocation_ratio='1')
    consumers = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5%d' % i
                 for i in range(5)]
    # 8 VCPUs at most per claim (max_unit); 32 in all at the tracker's 4.0
    for consumer in consumers[:4]:
        claims.claim_resources(db, [claims.Claim(consumer, provider,
                                                 {rcs.VCPU: 8})])
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [claims.Claim(consumers[4], provider,
                                                 {rcs.VCPU: 8})])


def test_switching_it_off_restores_the_tracker_ratio_at_the_next_report(
        conf, db):
    conf.set_override('aggregate_allocation_ratios', True, 'scheduler')
    enabled = db_api.Database(conf)
    fakes.report(enabled, 'h1', **REPORTED)
    _save(enabled, ['h1'], cpu_allocation_ratio='2')
    assert _vcpu(db, 'h1') == (2.0, 16)
    enabled.dispose()
    # db was opened with the option off: its next report of h1 restores it
    fakes.report(db, 'h1', updated_at=LATER, **REPORTED)
    assert _vcpu(db, 'h1') == (4.0, 32)
