"""IoOpsWeigher: fewer I/O operations win by default."""

import pytest

from scheduler.driver import plugins
from tests.unit.filters import hosts

HOSTS = hosts.table(dict(host='idle'), dict(host='busy', current_workload=6),
                    dict(host='busier', current_workload=9))

CASES = [
    # (multiplier or None for the default, expected multiplier, best host)
    (None, -1.0, 'idle'),
    (1.0, 1.0, 'busier'),
]


@pytest.mark.parametrize('multiplier, effective, best', CASES)
def test_multiplier_picks_the_winner(conf, multiplier, effective, best):
    if multiplier is not None:
        conf.set_override('io_ops_weight_multiplier', multiplier,
                          'filter_scheduler')
    conf.set_override('enabled_weighers', ['IoOpsWeigher'],
                      'filter_scheduler')
    weigher, = plugins.load_weighers(conf)
    assert weigher.multiplier == effective
    weights = hosts.weights(weigher, HOSTS, hosts.request())
    assert weights == {'idle': 0.0, 'busy': 6.0, 'busier': 9.0}
    assert max(weights, key=lambda h: effective * weights[h]) == best
