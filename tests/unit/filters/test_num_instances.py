"""NumInstancesFilter: running_vms below max_instances_per_host,
vectorized."""

import pytest

from scheduler.filters import num_instances
from tests.unit.filters import hosts

HOSTS = hosts.table(dict(host='empty'), dict(host='some', running_vms=49),
                    dict(host='full', running_vms=50),
                    dict(host='over', running_vms=70))

CASES = [
    (50, ['empty', 'some']),
    (1, ['empty']),
    (71, ['empty', 'some', 'full', 'over']),
]


@pytest.mark.parametrize('maximum, expected', CASES)
def test_filter(conf, maximum, expected):
    conf.set_override('max_instances_per_host', maximum, 'filter_scheduler')
    plugin = num_instances.NumInstancesFilter(conf)
    assert plugin.vectorized
    assert hosts.passing(plugin, HOSTS, hosts.request()) == expected


def test_follows_new_reports(conf):
    table = hosts.table(dict(host='h', running_vms=10))
    plugin = num_instances.NumInstancesFilter(conf)
    assert hosts.passing(plugin, table, hosts.request()) == ['h']
    table.apply([hosts.provider(1, 'h', running_vms=60)])
    assert hosts.passing(plugin, table, hosts.request()) == []
