"""The unit rules (min_unit, max_unit, step_size) hold for each allocation
of a claim, the capacity rule for their sum: a request whose instances
share a provider is claimed if each instance's amount is allowed."""

import pytest

from scheduler.db import claims
from scheduler import exception
from scheduler.db import provider_reads

from .. import fakes

C = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5%d' % i for i in range(4)]


@pytest.fixture
def host(db):
    """8 VCPU at ratio 4.0: 32 to hand out, at most 8 per allocation."""
    return fakes.report(db, 'h1', vcpus=8, cpu_allocation_ratio=4.0)


def _claimed(db, provider_id):
    [row] = provider_reads.load_changes(db, provider_ids=[provider_id])
    return row['inventories']['VCPU']['claimed']


def test_three_instances_of_max_unit_on_one_provider(db, host):
    claims.claim_resources(db, [claims.Claim(c, host, {'VCPU': 8})
                                for c in C[:3]])
    assert _claimed(db, host) == 24


def test_one_allocation_above_max_unit_is_refused(db, host):
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [claims.Claim(C[0], host, {'VCPU': 4}),
                                    claims.Claim(C[1], host, {'VCPU': 9})])
    assert _claimed(db, host) == 0


def test_the_sum_still_obeys_capacity(db, host):
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [claims.Claim(c, host, {'VCPU': 8})
                                    for c in C[:4]] +
                               [claims.Claim(C[0], host, {'VCPU': 1})])
    assert _claimed(db, host) == 0
