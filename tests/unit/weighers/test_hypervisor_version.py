"""HypervisorVersionWeigher: newer hypervisors weigh more."""

import pytest

from scheduler.weighers import hypervisor_version
from tests.unit.filters import hosts

CASES = [
    ('newer wins', [6002001, 4000000, 6000000], [6002001, 4000000, 6000000]),
    ('unreported counts as 0', [None, 1000], [0.0, 1000.0]),
]


@pytest.mark.parametrize('versions, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_weights(conf, versions, expected):
    table = hosts.table(*(dict(host='h%d' % i, hypervisor_version=v)
                          for i, v in enumerate(versions)))
    weigher = hypervisor_version.HypervisorVersionWeigher(conf)
    assert weigher.multiplier == 1.0
    weights = hosts.weights(weigher, table, hosts.request())
    assert list(weights.values()) == [float(v) for v in expected]
