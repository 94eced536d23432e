"""NUMATopologyFilter decides as nova's on a nova host: pinned vCPUs on the
dedicated set, thread policies, huge pages per cell, mixed policy and PCI
NUMA affinity; dedicated CPUs are asked for as PCPU, which ResourceFitFilter
and the claim count like any resource class."""

import copy
import json

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.filters import numa_topology
from scheduler.filters import resource_fit
from tests.unit.filters import hosts
from tests.unit.fixtures.nova import compute_nodes as nova


def _nova_host(name, **changes):
    report = dict(copy.deepcopy(nova.LIBVIRT_NUMA), **changes)
    report.pop('hypervisor_hostname')
    report.pop('host')
    return dict(host=name, **report)


def _no_smt(topology):
    cells = json.loads(topology)
    for cell in cells['cells']:
        cell['siblings'] = []
    return json.dumps(cells)


# the topology as this scheduler stores it, without SMT siblings
CELLS = objects.ComputeNode.from_stats(
    'compute-01', 'x', copy.deepcopy(nova.LIBVIRT_NUMA)).numa_topology
HOSTS = hosts.table(_nova_host('nova'),
                    _nova_host('no-smt', numa_topology=_no_smt(CELLS)))
VF = json.dumps({'name': 'vf', 'vendor_id': '8086', 'product_id': '154c',
                 'device_type': 'type-VF'})
VF_REQUIRED = json.dumps({'name': 'vf-near', 'vendor_id': '8086',
                          'product_id': '154c', 'device_type': 'type-VF',
                          'numa_policy': 'required'})

DEDICATED = {'hw:cpu_policy': 'dedicated'}
CASES = [
    # (why, vcpus, memory_mb, extra specs, hosts that pass)
    ('pinned on the dedicated set of one cell', 4, 2048, DEDICATED,
     ['nova', 'no-smt']),
    ('more pinned vCPUs than a cell has', 5, 2048, DEDICATED, []),
    ('isolate: a whole free core per vCPU', 2, 2048,
     dict(DEDICATED, **{'hw:cpu_thread_policy': 'isolate'}),
     ['nova', 'no-smt']),
    ('isolate: not enough whole cores', 3, 2048,
     dict(DEDICATED, **{'hw:cpu_thread_policy': 'isolate'}), ['no-smt']),
    ('require: thread siblings, SMT hosts only', 4, 2048,
     dict(DEDICATED, **{'hw:cpu_thread_policy': 'require'}), ['nova']),
    ('emulator threads isolated: one more pCPU', 4, 2048,
     dict(DEDICATED, **{'hw:emulator_threads_policy': 'isolate'}), []),
    ('emulator threads isolated, room for it', 3, 2048,
     dict(DEDICATED, **{'hw:emulator_threads_policy': 'isolate'}),
     ['nova', 'no-smt']),
    ('mixed: pinned and shared vCPUs in one cell', 6, 2048,
     {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0-1'},
     ['nova', 'no-smt']),
    ('mixed: too many pinned', 6, 2048,
     {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '0-4'}, []),
    ('large pages from the 2 MiB pool', 2, 4096,
     {'hw:mem_page_size': 'large'}, ['nova', 'no-smt']),
    ('large pages: more than the pool has free', 2, 30000,
     {'hw:mem_page_size': 'large'}, []),
    ('a page size no cell has', 2, 4096, {'hw:mem_page_size': '1GB'}, []),
    ('an explicit 2MB page size', 2, 4096, {'hw:mem_page_size': '2MB'},
     ['nova', 'no-smt']),
    ('small pages: a cell with enough of them', 2, 40960,
     {'hw:mem_page_size': 'small'}, ['nova', 'no-smt']),
    ('no page size: a guest never overcommits a cell', 2, 70000,
     {'hw:numa_nodes': '1'}, []),
    ('VF with the default (legacy) policy: any cell holding it', 2, 2048,
     dict(DEDICATED, **{'pci_passthrough:alias': 'vf:1'}),
     ['nova', 'no-smt']),
    ('VF required on the guest cell, guest only fits cell 0', 2, 40960,
     {'hw:mem_page_size': 'small', 'pci_passthrough:alias': 'vf-near:1'},
     []),
    ('the flavor overrides the alias policy', 2, 40960,
     {'hw:mem_page_size': 'small', 'pci_passthrough:alias': 'vf-near:1',
      'hw:pci_numa_affinity_policy': 'preferred'}, ['nova', 'no-smt']),
    ('legacy: a device with NUMA info must be on the cell', 2, 40960,
     {'hw:mem_page_size': 'small', 'pci_passthrough:alias': 'vf:1'}, []),
    ('socket: the device on another socket', 2, 40960,
     {'hw:mem_page_size': 'small', 'pci_passthrough:alias': 'vf:1',
      'hw:pci_numa_affinity_policy': 'socket'}, []),
]


@pytest.mark.parametrize('vcpus, memory_mb, extra_specs, expected',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_nova_numa_semantics(conf, vcpus, memory_mb, extra_specs,
                             expected):
    conf.set_override('alias', [VF, VF_REQUIRED], 'pci')
    plugin = numa_topology.NUMATopologyFilter(conf)
    request = hosts.request(extra_specs, vcpus=vcpus, memory_mb=memory_mb)
    assert hosts.passing(plugin, HOSTS, request) == expected


def test_image_properties_ask_for_a_topology_too(conf):
    plugin = numa_topology.NUMATopologyFilter(conf)
    request = hosts.request(
        image={'properties': {'hw_cpu_policy': 'dedicated',
                              'hw_cpu_thread_policy': 'require'}},
        vcpus=4, memory_mb=2048)
    assert request.resources[rcs.PCPU] == 4
    assert hosts.passing(plugin, HOSTS, request) == ['nova']


RESOURCES = [
    ('shared', {}, {rcs.VCPU: 4}),
    ('dedicated', DEDICATED, {rcs.PCPU: 4}),
    ('mixed', {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0'},
     {rcs.PCPU: 3, rcs.VCPU: 1}),
    ('emulator threads isolated', dict(
        DEDICATED, **{'hw:emulator_threads_policy': 'isolate'}),
     {rcs.PCPU: 5}),
]


@pytest.mark.parametrize('extra_specs, expected',
                         [c[1:] for c in RESOURCES],
                         ids=[c[0] for c in RESOURCES])
def test_dedicated_vcpus_are_asked_for_as_pcpu(extra_specs, expected):
    request = hosts.request(extra_specs, vcpus=4, memory_mb=1024)
    cpus = {rc: n for rc, n in request.resources.items()
            if rc in (rcs.VCPU, rcs.PCPU)}
    assert cpus == expected


def test_pcpu_inventory_is_the_dedicated_set(conf):
    # 8 dedicated CPUs, 1 pinned: 7 free PCPU; a host without a dedicated
    # set has no PCPU and takes no pinned guest
    table = hosts.table(_nova_host('nova'),
                        dict(host='shared-only', vcpus=16))
    assert table.view(0).free(rcs.PCPU) == 7
    plugin = resource_fit.ResourceFitFilter(conf)
    assert hosts.passing(plugin, table, hosts.request(
        DEDICATED, vcpus=7, memory_mb=1024)) == ['nova']
    assert hosts.passing(plugin, table, hosts.request(
        DEDICATED, vcpus=8, memory_mb=1024)) == []
    assert hosts.passing(plugin, table, hosts.request(
        vcpus=8, memory_mb=1024)) == ['nova', 'shared-only']


def test_a_bad_image_property_is_named(conf):
    plugin = numa_topology.NUMATopologyFilter(conf)
    request = hosts.request(image={'properties': {'hw_numa_nodes': 'two'}})
    with pytest.raises(exception.InvalidField) as caught:
        hosts.passing(plugin, HOSTS, request)
    assert caught.value.kwargs['field'] == 'image.properties.hw_numa_nodes'
