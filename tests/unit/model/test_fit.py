"""The fit rule of scheduler.model.fit: the same answer from the numpy, Python
and SQL forms (the filter, the driver and the claim)."""

import types

import numpy as np
import pytest

from scheduler.db import claims
from scheduler import exception
from scheduler.model import fit
from scheduler.model import resource_classes as rcs
from scheduler.host_state.table import HostTable
from scheduler.db import models

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'

CASES = [
    # reported, claimed, capacity, min, max, step, amount, fits
    (0, 0, 8, 1, 8, 1, 8, True),
    (3, 0, 8, 1, 8, 1, 6, False),   # the report leaves 5
    (0, 3, 8, 1, 8, 1, 6, False),   # the claims leave 5
    (3, 2, 8, 1, 8, 1, 5, True),    # usage is max(3, 2)
    (0, 0, 8, 2, 8, 1, 1, False),   # below min_unit
    (0, 0, 8, 1, 4, 1, 5, False),   # above max_unit
    (0, 0, 8, 1, 8, 2, 3, False),   # not a multiple of step_size
    (0, 0, 8, 1, 8, 2, 4, True),
]


@pytest.mark.parametrize('case', CASES)
def test_python_and_numpy_forms_agree(case):
    reported, claimed, capacity, min_unit, max_unit, step, amount, fits = \
        case
    row = types.SimpleNamespace(
        reported_used=reported, claimed=claimed, capacity=capacity,
        min_unit=min_unit, max_unit=max_unit, step_size=step)
    assert fit.row_fits(row, amount) is fits
    table = HostTable()
    table.apply([fakes.provider(1, 'h1', vcpus=capacity,
                                cpu_allocation_ratio=1.0,
                                vcpus_used=reported,
                                claimed={rcs.VCPU: claimed})])
    columns = table.resources[rcs.VCPU]
    columns.min_unit[0], columns.max_unit[0] = min_unit, max_unit
    columns.step_size[0] = step
    columns.stepped = step > 1
    assert bool(fit.column_fits(table, rcs.VCPU, amount)[0]) is fits
    assert table.fits(0, {rcs.VCPU: amount}) is fits


@pytest.mark.parametrize('step, amount, fits', [(2, 3, False),
                                                (2, 4, True)])
def test_the_claim_enforces_step_size(db, step, amount, fits):
    host = fakes.report(db, 'h1', vcpus=8, cpu_allocation_ratio=1.0)
    inv = models.inventories
    with db.writer() as session:
        session.execute(inv.update().where(
            inv.c.provider_id == host,
            inv.c.resource_class == rcs.VCPU).values(step_size=step))
    attempt = [claims.Claim(C1, host, {rcs.VCPU: amount})]
    if fits:
        claims.claim_resources(db, attempt)
    else:
        with pytest.raises(exception.ClaimConflict) as info:
            claims.claim_resources(db, attempt)
        assert info.value.kwargs['resource_class'] == rcs.VCPU


def test_every_row_reads_whole_columns_for_the_same_mask():
    table = HostTable()
    table.apply([fakes.provider(i, 'h%d' % i, vcpus=4,
                                cpu_allocation_ratio=1.0, vcpus_used=i)
                 for i in range(1, 5)])
    wanted = {rcs.VCPU: 2}
    expected = [True, True, False, False]
    assert fit.fits_all(table, wanted, np.arange(4)).tolist() == expected
    assert fit.fits_all(table, wanted, table.every_row()).tolist() == \
        expected
    table.assume(0, {rcs.VCPU: 3})  # a claim changes the answer at once
    assert fit.fits_all(table, wanted, table.every_row()).tolist() == [
        False, True, False, False]
