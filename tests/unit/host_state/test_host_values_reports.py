"""host_values' free amounts: a column fixed by each report plus the
table's free amount equals the value derived from scratch, before and
after hosts re-report, claims and tentative claims."""

import numpy as np
import pytest

from scheduler.model import resource_classes as rcs
from scheduler.host_state import host_values
from tests.unit.filters import hosts


def _from_scratch_ram(table, rows):
    derived = host_values._derived_free(table, rcs.MEMORY_MB, rows)
    return (host_values._reported_or(table, 'free_ram_mb', rows, derived)
            - host_values._unreported_claims(table, rcs.MEMORY_MB, rows))


def _from_scratch_disk(table, rows):
    derived = host_values._derived_free(table, rcs.DISK_GB, rows)
    free_gb = host_values._reported_or(table, 'free_disk_gb', rows, derived)
    least = table.column('disk_available_least', np.nan)[rows]
    free_gb = np.where(np.isnan(least), free_gb, np.minimum(free_gb, least))
    return (free_gb - host_values._unreported_claims(
        table, rcs.DISK_GB, rows)) * 1024


def _from_scratch_vcpus(table, rows):
    columns = table.resources[rcs.VCPU]
    return (columns.total[rows] * columns.allocation_ratio[rows]
            - host_values.usage(table, rcs.VCPU, rows))


FUNCTIONS = [
    ('free_ram_mb', host_values.free_ram_mb, _from_scratch_ram),
    ('free_disk_mb', host_values.free_disk_mb, _from_scratch_disk),
    ('vcpus_free', host_values.vcpus_free, _from_scratch_vcpus),
]

HOSTS = [
    dict(host='plain', vcpus=16, memory_mb=32768, local_gb=500),
    dict(host='used', vcpus=16, vcpus_used=6, memory_mb=32768,
         memory_mb_used=20000, local_gb=500, local_gb_used=120,
         disk_available_least=300),
    dict(host='overcommitted', vcpus=8, vcpus_used=40, memory_mb=8192,
         memory_mb_used=12000, free_ram_mb=-3808, local_gb=100,
         local_gb_used=90, free_disk_gb=10, cpu_allocation_ratio=2.0),
]


@pytest.mark.parametrize('function, from_scratch',
                         [f[1:] for f in FUNCTIONS],
                         ids=[f[0] for f in FUNCTIONS])
def test_same_as_from_scratch_through_changes(function, from_scratch):
    table = hosts.table(*HOSTS)
    rows = np.arange(table.size)

    def check():
        expected = from_scratch(table, rows)
        np.testing.assert_array_equal(function(table, rows), expected)
        # every row (HostTable.every_row): whole columns, same numbers
        assert function(table, table.every_row()).tobytes() == \
            expected.tobytes()

    check()
    # claims beyond the report, a tentative claim
    table.add_claim(1, {rcs.VCPU: 8, rcs.MEMORY_MB: 16384, rcs.DISK_GB: 200})
    table.assume(0, {rcs.VCPU: 2, rcs.MEMORY_MB: 4096, rcs.DISK_GB: 40})
    check()
    # re-reports: more used, other ratios, a new host
    table.apply([
        hosts.provider(1, host='plain', vcpus=16, vcpus_used=10,
                       memory_mb=32768, memory_mb_used=30000, local_gb=500,
                       local_gb_used=480, cpu_allocation_ratio=1.0),
        hosts.provider(4, host='new', vcpus=4, memory_mb=4096,
                       local_gb=50, disk_available_least=20)])
    rows = np.arange(table.size)
    check()
    assert function(table, rows[:1]) != from_scratch(
        hosts.table(*HOSTS), np.arange(1))[:1]
