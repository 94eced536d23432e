"""A nova ComputeNode, as nova's resource tracker reports it, is accepted
and its NUMA topology, PCI pools and supported_hv_specs are readable by
the filters."""

import copy
import json
import logging

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.objects import nova_compat
from tests.unit.fixtures.nova import compute_nodes as nova


@pytest.mark.parametrize('report', list(nova.REPORTS.values()),
                         ids=list(nova.REPORTS))
def test_report_is_accepted(report):
    data = nova_compat.unwrap(report)
    node = objects.ComputeNode.from_stats(
        data['host'], data['hypervisor_hostname'], copy.deepcopy(report))
    assert node.vcpus == data['vcpus']
    assert node.free_ram_mb == data['free_ram_mb']
    assert node.stats['io_workload'] == data['stats']['io_workload']
    assert ['x86_64', 'kvm', 'hvm'] in node.supported_instances


def test_numa_topology_pci_pools_are_read():
    node = objects.ComputeNode.from_stats(
        'compute-01', 'compute-01.example.org',
        copy.deepcopy(nova.LIBVIRT_NUMA_WIRE))
    cells = json.loads(node.numa_topology)['cells']
    assert [(c['id'], c['cpus'], c['pcpus'], c['pinned_cpus'])
            for c in cells] == [(0, [0, 1, 2, 3], [4, 5, 6, 7], [4]),
                                (1, [8, 9, 10, 11], [12, 13, 14, 15], [])]
    assert cells[1]['mempages'][1] == {
        'size_kb': 2048, 'total': 16384, 'used': 2048, 'reserved': 0}
    assert cells[0]['memory_mb'] == 65536
    assert node.pci_device_pools == [
        {'vendor_id': '8086', 'product_id': '1572', 'numa_node': '0',
         'count': '1', 'dev_type': 'type-PF',
         'physical_network': 'physnet1'},
        {'vendor_id': '8086', 'product_id': '154c', 'numa_node': '1',
         'count': '4', 'dev_type': 'type-VF',
         'physical_network': 'physnet1', 'parent_ifname': 'ens1f0'}]


def test_unused_fields_are_dropped_with_a_debug_line(caplog):
    with caplog.at_level(logging.DEBUG, 'scheduler.objects.nova_compat'):
        objects.ComputeNode.from_stats('compute-02', 'compute-02',
                                       copy.deepcopy(nova.PLAIN))
    assert 'service_id' in caplog.text and 'mapped' in caplog.text


def test_a_field_nobody_sends_stays_an_error():
    report = dict(copy.deepcopy(nova.PLAIN), hypervisor_flavour='x')
    with pytest.raises(exception.InvalidField) as info:
        objects.ComputeNode.from_stats('compute-02', 'compute-02', report)
    assert info.value.kwargs['field'] == 'stats.hypervisor_flavour'
