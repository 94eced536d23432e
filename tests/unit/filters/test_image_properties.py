"""ImagePropertiesFilter: architecture, hypervisor type, VM mode, version."""

import pytest

from scheduler import exception
from scheduler.filters import image_properties
from tests.unit.filters import hosts

HOSTS = hosts.table(
    dict(host='kvm', hypervisor_version=6002001,
         supported_instances=[['x86_64', 'kvm', 'hvm'],
                              ['i686', 'kvm', 'hvm']]),
    dict(host='xen', hypervisor_version=4001000,
         supported_instances=[['x86_64', 'xen', 'xen']]),
    dict(host='arm', hypervisor_version=None,
         supported_instances=[['aarch64', 'qemu', 'hvm']]),
    dict(host='silent', hypervisor_version=5000000),
    # fed from Placement: the architecture of its HW_ARCH_* trait only
    dict(host='fed-arm', hypervisor_version=None,
         supported_instances=[['aarch64']]),
    # fed from Placement without an HW_ARCH_* trait: nothing said
    dict(host='fed', hypervisor_version=None, supported_instances=[[]]),
)
ALL = ['kvm', 'xen', 'arm', 'silent', 'fed-arm', 'fed']

CASES = [
    ('no image', None, ALL),
    ('no relevant properties', {'hw_disk_bus': 'virtio'}, ALL),
    ('architecture', {'hw_architecture': 'x86_64'}, ['kvm', 'xen', 'fed']),
    ('architecture alias', {'hw_architecture': 'AMD64'},
     ['kvm', 'xen', 'fed']),
    ('legacy architecture name', {'architecture': 'aarch64'},
     ['arm', 'fed-arm', 'fed']),
    ('i386 is i686', {'hw_architecture': 'i386'}, ['kvm', 'fed']),
    ('hypervisor type', {'img_hv_type': 'kvm'}, ['kvm', 'fed-arm', 'fed']),
    ('xapi is xen', {'hypervisor_type': 'xapi'}, ['xen', 'fed-arm', 'fed']),
    ('vm mode', {'hw_vm_mode': 'hvm'}, ['kvm', 'arm', 'fed-arm', 'fed']),
    ('pv is xen', {'vm_mode': 'pv'}, ['xen', 'fed-arm', 'fed']),
    ('values must sit in one triple',
     {'hw_architecture': 'aarch64', 'img_hv_type': 'kvm'},
     ['fed-arm', 'fed']),
    ('all three', {'hw_architecture': 'x86_64', 'img_hv_type': 'xen',
                   'hw_vm_mode': 'xen'}, ['xen', 'fed']),
    ('version as integer', {'img_hv_requested_version': '>=5000000'},
     ['kvm', 'silent']),
    ('dotted version', {'img_hv_requested_version': '>=6.2'}, ['kvm']),
    ('dotted version, micro counts',
     {'img_hv_requested_version': '>6.2.0'}, ['kvm']),
    ('version range', {'hypervisor_version_requires': '>=4.0, <6.0'},
     ['xen', 'silent']),
    ('bare version means equal',
     {'img_hv_requested_version': '4.1.0'}, ['xen']),
    ('version with architecture',
     {'hw_architecture': 'x86_64', 'img_hv_requested_version': '>=5.0'},
     ['kvm']),
]


@pytest.mark.parametrize('properties, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_filter(conf, properties, expected):
    plugin = image_properties.ImagePropertiesFilter(conf)
    image = None if properties is None else {'id': 'img',
                                             'properties': properties}
    assert hosts.passing(plugin, HOSTS, hosts.request(image=image)) == \
        expected


@pytest.mark.parametrize('requirement', ['>=six', '=>6.0', '>=6.0,', ''])
def test_malformed_version_names_the_property(conf, requirement):
    plugin = image_properties.ImagePropertiesFilter(conf)
    request = hosts.request(image={'properties': {
        'img_hv_requested_version': requirement or ' '}})
    with pytest.raises(exception.InvalidField,
                       match='image.properties.img_hv_requested_version'):
        hosts.passing(plugin, HOSTS, request)
