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
