"""RAM/CPU/Disk weighers weigh nova's HostState amounts: physical
``free_ram_mb``, ``min(free_disk_gb, disk_available_least)`` and
``vcpus * ratio - vcpus_used``; a positive multiplier spreads (emptiest
host wins), a negative one packs."""

import numpy as np
import pytest

from scheduler.weighers import base
from scheduler.weighers import resources
from tests.unit import fakes
from tests.unit.filters import hosts

# (weigher, host A report, host B report, best with +1, why)
CASES = [
    (resources.RAMWeigher,
     dict(memory_mb=65536, free_ram_mb=8000, ram_allocation_ratio=1.5),
     dict(memory_mb=16384, free_ram_mb=9000),
     'b', 'physical free RAM, not capacity scaled by the ratio'),
    (resources.RAMWeigher,
     dict(memory_mb=16384, memory_mb_used=1000),
     dict(memory_mb=16384, memory_mb_used=9000),
     'a', 'no free_ram_mb reported: memory_mb - used'),
    (resources.RAMWeigher,
     dict(free_ram_mb=-2000), dict(free_ram_mb=100),
     'b', 'overcommitted RAM weighs negative'),
    (resources.DiskWeigher,
     dict(free_disk_gb=400, disk_available_least=100),
     dict(free_disk_gb=200),
     'b', 'min(free_disk_gb, disk_available_least)'),
    (resources.DiskWeigher,
     dict(free_disk_gb=100, disk_available_least=300),
     dict(free_disk_gb=150, disk_available_least=150),
     'b', 'the smaller of the two counts'),
    (resources.DiskWeigher,
     dict(local_gb=500, local_gb_used=100, disk_allocation_ratio=3.0),
     dict(local_gb=500, local_gb_used=50),
     'b', 'no free_disk_gb reported: local_gb - used, no ratio'),
    (resources.CPUWeigher,
     dict(vcpus=8, vcpus_used=10, cpu_allocation_ratio=4.0),
     dict(vcpus=16, vcpus_used=12, cpu_allocation_ratio=1.0),
     'a', 'vcpus * cpu_allocation_ratio - vcpus_used (22 > 4)'),
]


def _best(weigher, table):
    rows = np.arange(table.size)
    raw = weigher.weigh_all(table, rows, hosts.request())
    total = weigher.multiplier * base.normalize(raw)
    return table.hosts[int(rows[np.argmax(total)])]


@pytest.mark.parametrize('cls, a, b, best, why', CASES,
                         ids=[c[4] for c in CASES])
def test_best_host_is_novas(conf, cls, a, b, best, why):
    table = hosts.table(dict(host='a', **a), dict(host='b', **b))
    assert _best(cls(conf), table) == best


@pytest.mark.parametrize('cls, a, b, best, why', CASES,
                         ids=[c[4] for c in CASES])
def test_negative_multiplier_packs(conf, cls, a, b, best, why):
    conf.set_override(cls.multiplier_option, -1.0, 'filter_scheduler')
    table = hosts.table(dict(host='a', **a), dict(host='b', **b))
    assert _best(cls(conf), table) == ('a' if best == 'b' else 'b')


def test_weights_are_novas_numbers_for_the_given_rows(conf):
    table = hosts.table(
        dict(host='h0', free_ram_mb=1000, free_disk_gb=40,
             disk_available_least=30),
        dict(host='h1', free_ram_mb=3000, free_disk_gb=20))
    rows = np.array([1, 0])
    request = hosts.request()
    assert resources.RAMWeigher(conf).weigh_all(
        table, rows, request).tolist() == [3000.0, 1000.0]
    assert resources.DiskWeigher(conf).weigh_all(
        table, rows, request).tolist() == [20 * 1024.0, 30 * 1024.0]


def test_claims_beyond_the_report_count_as_usage(conf):
    # nova's HostState subtracts what its process placed since the report
    table = fakes.host_table(
        fakes.provider(1, 'claimed', memory_mb_used=1000,
                       claimed={'MEMORY_MB': 9000}),
        fakes.provider(2, 'reported', memory_mb_used=4000))
    assert _best(resources.RAMWeigher(conf), table) == 'reported'
