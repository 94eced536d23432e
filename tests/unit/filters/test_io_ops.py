"""IoOpsFilter: current_workload below max_io_ops_per_host, vectorized."""

import pytest

from scheduler.filters import io_ops
from tests.unit.filters import hosts

HOSTS = hosts.table(dict(host='idle'), dict(host='busy', current_workload=7),
                    dict(host='full', current_workload=8),
                    dict(host='over', current_workload=12))

CASES = [
    (8, ['idle', 'busy']),
    (1, ['idle']),
    (0, []),
    (100, ['idle', 'busy', 'full', 'over']),
]


@pytest.mark.parametrize('maximum, expected', CASES)
def test_filter(conf, maximum, expected):
    conf.set_override('max_io_ops_per_host', maximum, 'filter_scheduler')
    plugin = io_ops.IoOpsFilter(conf)
    assert plugin.vectorized
    assert hosts.passing(plugin, HOSTS, hosts.request()) == expected


def test_explain_names_the_limit(conf):
    plugin = io_ops.IoOpsFilter(conf)
    assert plugin.explain(HOSTS, hosts.request(), [2]) == \
        'max_io_ops_per_host=8 reached'
