"""JsonFilter variables mean what nova's HostState attributes mean."""

import pytest

from scheduler.filters import json_filter
from tests.unit import fakes
from tests.unit.filters import hosts

HOSTS = hosts.table(
    # lots of capacity thanks to the ratio, little physical RAM left
    dict(host='overcommitted', memory_mb=32768, free_ram_mb=1000,
         ram_allocation_ratio=1.5, free_disk_gb=300,
         disk_available_least=20, vcpus=8, local_gb=500),
    dict(host='roomy', memory_mb=16384, free_ram_mb=12000,
         free_disk_gb=100, vcpus=32, local_gb=200))

CASES = [
    ('free_ram_mb is physical', '[">=", "$free_ram_mb", 4096]', ['roomy']),
    ('free_disk_mb uses disk_available_least',
     '[">=", "$free_disk_mb", 51200]', ['roomy']),
    ('total_usable_ram_mb is memory_mb',
     '[">", "$total_usable_ram_mb", 20000]', ['overcommitted']),
    ('total_usable_disk_gb is local_gb',
     '["<", "$total_usable_disk_gb", 300]', ['roomy']),
    ('vcpus_total', '["=", "$vcpus_total", 32]', ['roomy']),
    ('extension: tracker attribute', '["=", "$local_gb", 500]',
     ['overcommitted']),
]


@pytest.mark.parametrize('query, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_variables(conf, query, expected):
    request = hosts.request(hints={'query': query})
    assert hosts.passing(json_filter.JsonFilter(conf), HOSTS,
                         request) == expected


def test_failed_builds_counts_reported_failures(conf):
    table = fakes.host_table(fakes.provider(1, 'h1'), fakes.provider(2, 'h2'))
    table.failed_builds[1] = 2
    request = hosts.request(hints={'query': '[">", "$failed_builds", 0]'})
    assert hosts.passing(json_filter.JsonFilter(conf), table,
                         request) == ['h2']
