"""PCIWeigher: hosts with fewer free PCI devices weigh more."""

import pytest

from scheduler.weighers import pci
from tests.unit.filters import hosts


def _pools(*counts):
    return [dict(vendor_id='8086', product_id='154c', count=c)
            for c in counts]


HOSTS = hosts.table(
    dict(host='none'),
    dict(host='few', pci_device_pools=_pools(2)),
    dict(host='more', pci_device_pools=_pools(3, 4)),
    # as nova, 99 free devices or more weigh alike
    dict(host='plenty', pci_device_pools=_pools(99)),
    dict(host='huge', pci_device_pools=_pools(500)),
)

CASES = [
    ('request without PCI', {}),
    ('request with PCI', {'pci_passthrough:alias': 'nic:1'}),
]


@pytest.mark.parametrize('extra_specs', [c[1] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_fewer_free_devices_weigh_more(conf, extra_specs):
    weigher = pci.PCIWeigher(conf)
    weights = hosts.weights(weigher, HOSTS, hosts.request(extra_specs))
    assert weights == {'none': 0.0, 'few': -2.0, 'more': -7.0,
                       'plenty': -99.0, 'huge': -99.0}
    assert weigher.multiplier > 0
