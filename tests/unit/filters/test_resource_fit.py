"""ResourceFitFilter: room is (total - reserved) * allocation_ratio minus
usage, usage is max(reported_used, claimed), and an amount must lie within
min_unit..max_unit (max_unit is the host's total).

Inventories come from the real report-to-inventory translation, so these
cases read like tracker reports. Default ratios: VCPU 4.0, RAM and disk 1.0.
"""

import numpy as np
import pytest

from scheduler.model import resource_classes as rcs
from scheduler.filters import resource_fit

from .. import fakes

# host shape: 8 VCPUs, 16384 MB, 500 GB
CASES = [
    # (name, report, claimed, request, passes)
    ('empty-host', {}, {}, {'vcpus': 1}, True),
    ('whole-host', {'cpu_allocation_ratio': 1.0},
     {}, {'vcpus': 8, 'memory_mb': 16384, 'root_gb': 500}, True),
    ('cpu-overcommit-room', {'vcpus_used': 30}, {}, {'vcpus': 2}, True),
    ('cpu-overcommit-full', {'vcpus_used': 30}, {}, {'vcpus': 3}, False),
    ('cpu-ratio-1-fits', {'cpu_allocation_ratio': 1.0, 'vcpus_used': 7},
     {}, {'vcpus': 1}, True),
    ('cpu-ratio-1-full', {'cpu_allocation_ratio': 1.0, 'vcpus_used': 7},
     {}, {'vcpus': 2}, False),
    ('cpu-reserved-fits', {'cpu_allocation_ratio': 1.0,
                           'reserved_host_cpus': 2, 'vcpus_used': 5},
     {}, {'vcpus': 1}, True),
    ('cpu-reserved-full', {'cpu_allocation_ratio': 1.0,
                           'reserved_host_cpus': 2, 'vcpus_used': 5},
     {}, {'vcpus': 2}, False),
    ('ram-reserved-fits', {'reserved_host_memory_mb': 4096},
     {}, {'memory_mb': 12288}, True),
    ('ram-reserved-full', {'reserved_host_memory_mb': 4096},
     {}, {'memory_mb': 12289}, False),
    ('ram-ratio-fits', {'ram_allocation_ratio': 1.5,
                        'memory_mb_used': 10000},
     {}, {'memory_mb': 14576}, True),
    ('ram-ratio-full', {'ram_allocation_ratio': 1.5,
                        'memory_mb_used': 10000},
     {}, {'memory_mb': 14577}, False),
    ('disk-reserved-fits', {'reserved_host_disk_mb': 100 * 1024},
     {}, {'root_gb': 400}, True),
    ('disk-reserved-full', {'reserved_host_disk_mb': 100 * 1024},
     {}, {'root_gb': 401}, False),
    ('claims-above-report-fit', {'vcpus_used': 2}, {rcs.VCPU: 31},
     {'vcpus': 1}, True),
    ('claims-above-report-full', {'vcpus_used': 2}, {rcs.VCPU: 31},
     {'vcpus': 2}, False),
    ('report-above-claims-fit', {'vcpus_used': 31}, {rcs.VCPU: 2},
     {'vcpus': 1}, True),
    ('report-above-claims-full', {'vcpus_used': 31}, {rcs.VCPU: 2},
     {'vcpus': 2}, False),
    ('above-max-unit', {}, {}, {'vcpus': 9}, False),
    ('no-disk-host-no-disk-request', {'local_gb': 0}, {}, {'root_gb': 0},
     True),
    ('no-disk-host-disk-request', {'local_gb': 0}, {}, {'root_gb': 1},
     False),
]


def _request(vcpus=1, memory_mb=512, root_gb=0):
    return fakes.request_state(vcpus=vcpus, memory_mb=memory_mb,
                               root_gb=root_gb)


@pytest.mark.parametrize('report, claimed, request_args, passes',
                         [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_host_fits(conf, report, claimed, request_args, passes):
    table = fakes.host_table(fakes.provider(1, 'h1', claimed=claimed,
                                            **report))
    plugin = resource_fit.ResourceFitFilter(conf)
    request = _request(**request_args)
    assert plugin.filter_all(table, request).tolist() == [passes]
    # the table's own fit check (used for later instances) agrees
    assert table.fits(0, request.resources) is passes


def test_mask_over_many_hosts(conf):
    table = fakes.host_table(
        fakes.provider(1, 'full', vcpus_used=32),
        fakes.provider(2, 'room'),
        fakes.provider(3, 'small', memory_mb=256),
        fakes.provider(4, 'room2', claimed={rcs.MEMORY_MB: 1024}))
    mask = resource_fit.ResourceFitFilter(conf).filter_all(
        table, _request(vcpus=1, memory_mb=1024))
    assert [table.hosts[r] for r in np.flatnonzero(mask)] == [
        'room', 'room2']


def test_explain_counts_each_host_once_by_first_missing_class(conf):
    table = fakes.host_table(
        fakes.provider(1, 'no-cpu', vcpus=1),
        fakes.provider(2, 'no-ram', memory_mb=256),
        fakes.provider(3, 'no-either', vcpus=1, memory_mb=256),
        fakes.provider(4, 'no-disk', local_gb=1))
    plugin = resource_fit.ResourceFitFilter(conf)
    request = _request(vcpus=2, memory_mb=1024, root_gb=10)
    removed = np.flatnonzero(~plugin.filter_all(table, request))
    assert removed.tolist() == [0, 1, 2, 3]
    assert plugin.explain(table, request, removed) == (
        'DISK_GB: 1, MEMORY_MB: 2, VCPU: 1')


def test_explain_of_nothing_removed_is_none(conf):
    table = fakes.host_table(fakes.provider(1, 'h1'))
    plugin = resource_fit.ResourceFitFilter(conf)
    assert plugin.explain(table, _request(), np.array([], dtype=int)) is None
