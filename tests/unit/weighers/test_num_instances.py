"""NumInstancesWeigher: fewer instances win by default (spreading)."""

import pytest

from scheduler import exception
from scheduler.driver import plugins
from scheduler.weighers import num_instances
from tests.unit.filters import hosts

HOSTS = hosts.table(dict(host='empty'), dict(host='some', running_vms=3),
                    dict(host='many', running_vms=30))

CASES = [
    # (multiplier or None for the default, expected best host)
    (None, 'empty'),
    (-2.0, 'empty'),
    (1.0, 'many'),
]


@pytest.mark.parametrize('multiplier, best', CASES)
def test_multiplier_picks_the_winner(conf, multiplier, best):
    if multiplier is not None:
        conf.set_override('num_instances_weight_multiplier', multiplier,
                          'filter_scheduler')
    weigher = num_instances.NumInstancesWeigher(conf)
    weights = hosts.weights(weigher, HOSTS, hosts.request())
    assert weights == {'empty': 0.0, 'some': 3.0, 'many': 30.0}
    assert max(weights, key=lambda h: weigher.multiplier * weights[h]) == \
        best


def test_zero_multiplier_is_rejected_at_start_up(conf):
    conf.set_override('num_instances_weight_multiplier', 0.0,
                      'filter_scheduler')
    conf.set_override('enabled_weighers', ['NumInstancesWeigher'],
                      'filter_scheduler')
    with pytest.raises(exception.PluginLoadError, match='multiplier 0'):
        plugins.load_weighers(conf)
