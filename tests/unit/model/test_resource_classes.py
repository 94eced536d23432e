"""How a flavor translates into amounts of standard resource classes."""

import pytest

from scheduler import objects
from scheduler.model import resource_classes as rcs


@pytest.mark.parametrize('flavor, expected', [
    ({'vcpus': 2, 'memory_mb': 4096, 'root_gb': 20},
     {rcs.VCPU: 2, rcs.MEMORY_MB: 4096, rcs.DISK_GB: 20}),
    ({'vcpus': 1, 'memory_mb': 512, 'root_gb': 10, 'ephemeral_gb': 5,
      'swap': 1},
     {rcs.VCPU: 1, rcs.MEMORY_MB: 512, rcs.DISK_GB: 16}),
    ({'vcpus': 1, 'memory_mb': 512, 'swap': 2048},
     {rcs.VCPU: 1, rcs.MEMORY_MB: 512, rcs.DISK_GB: 2}),
    ({'vcpus': 1, 'memory_mb': 512}, {rcs.VCPU: 1, rcs.MEMORY_MB: 512}),
    ({'vcpus': 0, 'memory_mb': 0}, {}),
], ids=['root-only', 'swap-rounds-up', 'swap-exact', 'no-disk', 'nothing'])
def test_flavor_resources(flavor, expected):
    assert rcs.flavor_resources(objects.Flavor(**flavor)) == expected


@pytest.mark.parametrize('extra_specs, expected', [
    ({'resources:CUSTOM_MAGIC': '1'},
     {rcs.VCPU: 2, rcs.MEMORY_MB: 512, 'CUSTOM_MAGIC': 1}),
    ({'resources:VCPU': '0', 'resources:PCPU': '2'},
     {rcs.PCPU: 2, rcs.MEMORY_MB: 512}),
    ({'resources1:CUSTOM_MAGIC': '1', 'hw:cpu_policy': 'shared'},
     {rcs.VCPU: 2, rcs.MEMORY_MB: 512}),
], ids=['added', 'replaced', 'numbered-group-not-read'])
def test_extra_spec_resources(extra_specs, expected):
    spec = objects.RequestSpec(flavor=objects.Flavor(
        vcpus=2, memory_mb=512, extra_specs=extra_specs))
    assert rcs.request_resources(spec) == expected


@pytest.mark.parametrize('key, value', [
    ('resources:not a class', '1'), ('resources:CUSTOM_X', 'many'),
    ('resources:CUSTOM_X', '-1')])
def test_a_bad_extra_spec_resource_names_its_key(key, value):
    from scheduler import exception
    spec = objects.RequestSpec(flavor=objects.Flavor(
        vcpus=1, memory_mb=512, extra_specs={key: value}))
    with pytest.raises(exception.InvalidField) as info:
        rcs.request_resources(spec)
    assert info.value.kwargs['field'] == 'flavor.extra_specs.' + key
