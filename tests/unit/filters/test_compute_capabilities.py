"""ComputeCapabilitiesFilter: scoped and unscoped extra specs vs hosts."""

import json

import pytest

from scheduler.filters import compute_capabilities
from tests.unit.filters import hosts

HOSTS = hosts.table(
    dict(host='kvm-new', hypervisor_type='QEMU', hypervisor_version=6002000,
         cpu_info=json.dumps({'arch': 'x86_64',
                              'features': ['avx', 'avx2']}),
         stats={'gpu': 'nvidia', 'numa': '2'}),
    dict(host='kvm-old', hypervisor_type='QEMU', hypervisor_version=4000000,
         cpu_info=json.dumps({'arch': 'x86_64', 'features': ['sse4']}),
         stats={'gpu': 'none'}),
    dict(host='arm', hypervisor_type='QEMU', hypervisor_version=6000000,
         cpu_info=json.dumps({'arch': 'aarch64'})),
)
ALL = ['kvm-new', 'kvm-old', 'arm']

CASES = [
    ('no extra specs', {}, ALL),
    ('scoped attribute', {'capabilities:hypervisor_version': '>= 6000000'},
     ['kvm-new', 'arm']),
    ('scoped stat', {'capabilities:gpu': 'nvidia'}, ['kvm-new']),
    ('scoped JSON attribute', {'capabilities:cpu_info:arch': 'x86_64'},
     ['kvm-new', 'kvm-old']),
    ('scoped, value missing on some hosts',
     {'capabilities:numa': '= 2'}, ['kvm-new']),
    ('scoped, unknown everywhere', {'capabilities:nonexistent': 'x'}, []),
    ('scoped, path below a scalar', {'capabilities:gpu:model': 'x'}, []),
    ('several specs must all hold',
     {'capabilities:cpu_info:arch': 'x86_64',
      'capabilities:hypervisor_version': '>= 6000000'}, ['kvm-new']),
    ('unscoped stat: checked where reported', {'gpu': 'nvidia'},
     ['kvm-new', 'arm']),
    ('unscoped attribute', {'hypervisor_type': 's== QEMU'}, ALL),
    ('unscoped, reported nowhere: ignored', {'nonexistent': 'x'}, ALL),
    ('other namespaces belong to other filters',
     {'hw:cpu_policy': 'dedicated', 'pci_passthrough:alias': 'a:1',
      'trait:CUSTOM_X': 'required'}, ALL),
]


@pytest.mark.parametrize('extra_specs, expected',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_filter(conf, extra_specs, expected):
    plugin = compute_capabilities.ComputeCapabilitiesFilter(conf)
    request = hosts.request(extra_specs)
    assert hosts.passing(plugin, HOSTS, request) == expected


def test_requirements_are_parsed_once_per_request(conf, monkeypatch):
    plugin = compute_capabilities.ComputeCapabilitiesFilter(conf)
    request = hosts.request({'capabilities:gpu': 'nvidia'})
    calls = []
    real = compute_capabilities._requirements
    monkeypatch.setattr(compute_capabilities, '_requirements',
                        lambda r: calls.append(r) or real(r))
    hosts.passing(plugin, HOSTS, request)
    hosts.passing(plugin, HOSTS, request)
    assert len(calls) == 1


# Names are nova's HostState attributes, not ComputeNode fields.
NOVA_HOSTS = hosts.table(
    dict(host='big', vcpus=64, free_ram_mb=60000, memory_mb=65536,
         cpu_info=json.dumps({'arch': 'x86_64',
                              'maxphysaddr': {'mode': 'emulate',
                                              'bits': 46}})),
    dict(host='small', vcpus=8, free_ram_mb=2000, memory_mb=8192,
         stats={'vcpus': '100'},
         cpu_info=json.dumps({'arch': 'x86_64',
                              'maxphysaddr': {'bits': 39}})),
    dict(host='old', vcpus=16, free_ram_mb=9000, memory_mb=16384,
         cpu_info=json.dumps({'arch': 'x86_64'})))

NOVA_CASES = [
    ('vcpus_total is the HostState name',
     {'capabilities:vcpus_total': '>= 16'}, ['big', 'old']),
    ('vcpus is no HostState attribute: read from stats only',
     {'capabilities:vcpus': '>= 16'}, ['small']),
    ('unscoped ComputeNode field: checked only where a stat',
     {'vcpus': '>= 200'}, ['big', 'old']),
    ('free_ram_mb is physical free RAM',
     {'capabilities:free_ram_mb': '>= 8192'}, ['big', 'old']),
    ('total_usable_ram_mb is memory_mb',
     {'capabilities:total_usable_ram_mb': '>= 16384'}, ['big', 'old']),
    ('hw:maxphysaddr_bits needs as many address bits',
     {'hw:maxphysaddr_mode': 'emulate', 'hw:maxphysaddr_bits': '42'},
     ['big']),
    ('hw:maxphysaddr_bits within every host',
     {'hw:maxphysaddr_bits': '39'}, ['big', 'small']),
]


@pytest.mark.parametrize('extra_specs, expected',
                         [c[1:] for c in NOVA_CASES],
                         ids=[c[0] for c in NOVA_CASES])
def test_names_are_novas_host_state(conf, extra_specs, expected):
    plugin = compute_capabilities.ComputeCapabilitiesFilter(conf)
    request = hosts.request(extra_specs)
    assert hosts.passing(plugin, NOVA_HOSTS, request) == expected
