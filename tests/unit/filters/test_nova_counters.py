"""Nova's HostState counters: ``num_io_ops`` is ``stats['io_workload']``
(I/O-heavy task states only) and ``num_instances`` is
``stats['num_instances']``; every plugin that reads them agrees.

A nova tracker reports both the stats and the legacy ``current_workload``
/ ``running_vms`` (every task state), which may differ: the stats win.
"""

import pytest

from scheduler import objects
from scheduler.filters import aggregate_limits
from scheduler.filters import io_ops
from scheduler.filters import json_filter
from scheduler.filters import num_instances
from scheduler.weighers import io_ops as io_ops_weigher
from scheduler.weighers import num_instances as num_instances_weigher
from tests.unit.filters import hosts

# current_workload counts every task state; io_workload only I/O-heavy ones
HOSTS = hosts.table(
    dict(host='resizing', current_workload=9,
         stats={'io_workload': '1', 'num_instances': '3'}, running_vms=9),
    dict(host='deleting', current_workload=0,
         stats={'io_workload': '9', 'num_instances': '9'}, running_vms=1),
    dict(host='legacy', current_workload=2, running_vms=2))


def _agg(key, value):
    return objects.Aggregate(uuid='00000000-0000-4000-8000-00000000000a',
                             name='a', hosts=['resizing', 'deleting'],
                             metadata={key: value})


FILTERS = [
    (io_ops.IoOpsFilter, 'max_io_ops_per_host', ['resizing', 'legacy']),
    (num_instances.NumInstancesFilter, 'max_instances_per_host',
     ['resizing', 'legacy']),
    (aggregate_limits.AggregateIoOpsFilter, 'max_io_ops_per_host',
     ['resizing', 'legacy']),
    (aggregate_limits.AggregateNumInstancesFilter, 'max_instances_per_host',
     ['resizing', 'legacy']),
]


@pytest.mark.parametrize('cls, option, expected', FILTERS,
                         ids=[f[0].__name__ for f in FILTERS])
def test_filters_read_the_stats(conf, cls, option, expected):
    conf.set_override(option, 5, 'filter_scheduler')
    assert hosts.passing(cls(conf), HOSTS, hosts.request()) == expected


WEIGHERS = [
    (io_ops_weigher.IoOpsWeigher,
     {'resizing': 1.0, 'deleting': 9.0, 'legacy': 2.0}),
    (num_instances_weigher.NumInstancesWeigher,
     {'resizing': 3.0, 'deleting': 9.0, 'legacy': 2.0}),
]


@pytest.mark.parametrize('cls, expected', WEIGHERS,
                         ids=[w[0].__name__ for w in WEIGHERS])
def test_weighers_read_the_stats(conf, cls, expected):
    assert hosts.weights(cls(conf), HOSTS, hosts.request()) == expected


@pytest.mark.parametrize('query, expected', [
    ('["<", "$num_io_ops", 5]', ['resizing', 'legacy']),
    ('["<", "$num_instances", 5]', ['resizing', 'legacy']),
])
def test_json_filter_variables(conf, query, expected):
    request = hosts.request(hints={'query': query})
    assert hosts.passing(json_filter.JsonFilter(conf), HOSTS,
                         request) == expected
