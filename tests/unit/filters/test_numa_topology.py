"""NUMATopologyFilter: guest cells from extra specs on host NUMA cells."""

import json

import numpy as np
import pytest

from scheduler import exception
from scheduler.filters import numa_topology
from tests.unit.filters import hosts


def _topology(*cells):
    return json.dumps({'cells': [dict(id=i, **c) for i, c in
                                 enumerate(cells)]})


def _cell(cpus, memory_mb, **usage):
    return dict(cpus=list(range(cpus)), memory_mb=memory_mb, **usage)


HOSTS = hosts.table(
    # two cells of 4 CPUs / 8 GiB, nothing used; cpu ratio 4.0 (default)
    dict(host='two-free', vcpus=8, memory_mb=16384,
         numa_topology=_topology(_cell(4, 8192), _cell(4, 8192))),
    # two cells, the first mostly pinned and its memory mostly used
    dict(host='two-busy', vcpus=8, memory_mb=16384,
         numa_topology=_topology(
             _cell(4, 8192, pinned_cpus=[0, 1, 2], memory_used_mb=7168),
             _cell(4, 8192, pinned_cpus=[0], cpu_usage=12))),
    # one big cell, no overcommit of CPUs
    dict(host='one-big', vcpus=16, memory_mb=32768, cpu_allocation_ratio=1.0,
         numa_topology=_topology(_cell(16, 32768))),
    dict(host='no-topology', vcpus=8, memory_mb=16384),
    dict(host='garbled', vcpus=8, memory_mb=16384, numa_topology='{"cells'),
)
ALL = ['two-free', 'two-busy', 'one-big', 'no-topology', 'garbled']

CASES = [
    ('no topology requested', 4, 4096, {}, ALL),
    ('shared policy alone requests nothing', 4, 4096,
     {'hw:cpu_policy': 'shared'}, ALL),
    ('one cell, shared', 4, 4096, {'hw:numa_nodes': '1'},
     ['two-free', 'two-busy', 'one-big']),
    ('one cell, more vCPUs than any small cell', 6, 4096,
     {'hw:numa_nodes': '1'}, ['one-big']),
    ('two cells', 8, 8192, {'hw:numa_nodes': '2'}, ['two-free']),
    ('explicit single cell', 4, 1024,
     {'hw:numa_nodes': '1', 'hw:numa_cpus.0': '0-3',
      'hw:numa_mem.0': '1024'}, ['two-free', 'two-busy', 'one-big']),
    ('dedicated: one implicit cell of free pCPUs', 3, 1024,
     {'hw:cpu_policy': 'dedicated'}, ['two-free', 'two-busy', 'one-big']),
    ('dedicated: pinned CPUs are taken', 4, 1024,
     {'hw:cpu_policy': 'dedicated'}, ['two-free', 'one-big']),
    ('dedicated on two cells', 6, 2048,
     {'hw:cpu_policy': 'dedicated', 'hw:numa_nodes': '2'}, ['two-free']),
    # on two-busy the small cell fills the first host cell's memory
    # exactly, the big one the second cell's CPU limit (12 + 4 = 4 * 4.0)
    ('explicit uneven cells', 5, 6144,
     {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0-3',
      'hw:numa_mem.0': '5120', 'hw:numa_cpus.1': '4',
      'hw:numa_mem.1': '1024'}, ['two-free', 'two-busy']),
    ('explicit uneven cells, one MiB too many', 5, 6145,
     {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0-3',
      'hw:numa_mem.0': '5120', 'hw:numa_cpus.1': '4',
      'hw:numa_mem.1': '1025'}, ['two-free']),
    ('memory per cell', 2, 16384, {'hw:numa_nodes': '2'}, ['two-free']),
    ('memory of one cell too big', 2, 12288, {'hw:numa_nodes': '1'},
     ['one-big']),
]


@pytest.mark.parametrize('vcpus, memory_mb, extra_specs, expected',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(conf, vcpus, memory_mb, extra_specs, expected):
    plugin = numa_topology.NUMATopologyFilter(conf)
    request = hosts.request(extra_specs, vcpus=vcpus, memory_mb=memory_mb)
    assert hosts.passing(plugin, HOSTS, request) == expected


SHARED_CPU_LIMIT = [
    # (host cpu_allocation_ratio, cpu_usage of its 4-CPU cell, guest vCPUs,
    #  passes)
    (4.0, 14, 2, True),
    (4.0, 14, 3, False),
    (1.0, 0, 4, True),
    (1.0, 1, 4, False),
    (16.0, 0, 5, False),   # never more vCPUs than the cell has CPUs
    (2.0, 3, 4, True),
    (2.0, 5, 4, False),
]


@pytest.mark.parametrize('ratio, cpu_usage, vcpus, passes',
                         SHARED_CPU_LIMIT)
def test_shared_cpus_honour_the_allocation_ratio(conf, ratio, cpu_usage,
                                                 vcpus, passes):
    table = hosts.table(dict(
        host='h', vcpus=4, memory_mb=8192, cpu_allocation_ratio=ratio,
        numa_topology=_topology(_cell(4, 8192, cpu_usage=cpu_usage))))
    plugin = numa_topology.NUMATopologyFilter(conf)
    request = hosts.request({'hw:numa_nodes': '1'}, vcpus=vcpus,
                            memory_mb=1024)
    assert hosts.passing(plugin, table, request) == (['h'] if passes
                                                     else [])


ERRORS = [
    ('bad policy', 4, 4096, {'hw:cpu_policy': 'exclusive'}, 'hw:cpu_policy'),
    ('bad node count', 4, 4096, {'hw:numa_nodes': 'two'}, 'hw:numa_nodes'),
    ('more cells than vCPUs', 2, 4096, {'hw:numa_nodes': '3'},
     'hw:numa_nodes'),
    ('uneven split', 3, 4096, {'hw:numa_nodes': '2'}, 'hw:numa_nodes'),
    ('missing cell memory', 4, 4096,
     {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0,1', 'hw:numa_mem.0': '2048',
      'hw:numa_cpus.1': '2,3'}, 'hw:numa_mem.1'),
    ('CPU in two cells', 4, 4096,
     {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0-2', 'hw:numa_mem.0': '2048',
      'hw:numa_cpus.1': '2,3', 'hw:numa_mem.1': '2048'}, 'hw:numa_cpus.1'),
    ('CPU left out', 4, 4096,
     {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0', 'hw:numa_mem.0': '2048',
      'hw:numa_cpus.1': '1-3,^3', 'hw:numa_mem.1': '2048'},
     'hw:numa_cpus.0'),
    ('memory does not add up', 4, 4096,
     {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0,1', 'hw:numa_mem.0': '1024',
      'hw:numa_cpus.1': '2,3', 'hw:numa_mem.1': '2048'}, 'hw:numa_mem.0'),
    ('bad CPU set', 4, 4096,
     {'hw:numa_nodes': '1', 'hw:numa_cpus.0': '0-x', 'hw:numa_mem.0': '4096'},
     'hw:numa_cpus.0'),
]


@pytest.mark.parametrize('vcpus, memory_mb, extra_specs, key',
                         [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_bad_extra_specs_name_the_key(conf, vcpus, memory_mb, extra_specs,
                                      key):
    plugin = numa_topology.NUMATopologyFilter(conf)
    with pytest.raises(exception.InvalidField) as caught:
        # the CPU policy already fails when the request is read
        request = hosts.request(extra_specs, vcpus=vcpus,
                                memory_mb=memory_mb)
        hosts.passing(plugin, HOSTS, request)
    assert caught.value.kwargs['field'] == 'flavor.extra_specs.' + key


def _every_host(plugin, table, request):
    """Hosts passing ``host_passes`` alone, no pre-check."""
    return [table.hosts[row] for row in range(table.size)
            if plugin.host_passes(table.view(row), request)]


@pytest.mark.parametrize('vcpus, memory_mb, extra_specs, expected',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_precheck_changes_nothing(conf, vcpus, memory_mb, extra_specs,
                                  expected):
    plugin = numa_topology.NUMATopologyFilter(conf)
    request = hosts.request(extra_specs, vcpus=vcpus, memory_mb=memory_mb)
    if not plugin.applies_to(request):
        # not run for this request: every host passes, without a check
        assert plugin.mask_for(HOSTS, request, np.arange(HOSTS.size)).all()
        assert expected == list(HOSTS.hosts[:HOSTS.size])
        return
    assert _every_host(plugin, HOSTS, request) == expected


def test_precheck_removes_hosts_without_enough_cells(conf):
    plugin = numa_topology.NUMATopologyFilter(conf)
    request = hosts.request({'hw:numa_nodes': '2'}, vcpus=2, memory_mb=2048)
    rows = np.arange(HOSTS.size)
    possible = plugin.precheck(HOSTS, request, rows)
    assert [HOSTS.hosts[r] for r in rows[possible]] == ['two-free',
                                                        'two-busy']


def test_host_re_reporting_its_topology_is_seen(conf):
    table = hosts.table(dict(host='h', vcpus=4, memory_mb=8192,
                             numa_topology=_topology(_cell(4, 8192))))
    plugin = numa_topology.NUMATopologyFilter(conf)
    request = hosts.request({'hw:cpu_policy': 'dedicated'}, vcpus=2,
                            memory_mb=1024)
    assert hosts.passing(plugin, table, request) == ['h']
    # the host pins three of its four CPUs and reports again
    table.apply([hosts.provider(1, host='h', vcpus=4, memory_mb=8192,
                                numa_topology=_topology(_cell(
                                    4, 8192, pinned_cpus=[0, 1, 2])))])
    assert hosts.passing(plugin, table, request) == []
    # and loses its topology altogether
    table.apply([hosts.provider(1, host='h', vcpus=4, memory_mb=8192)])
    assert numa_topology.numa_cells.cell_count(table).tolist() == [0.0]
    assert hosts.passing(plugin, table, request) == []
