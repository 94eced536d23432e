"""AggregateIoOpsFilter and AggregateNumInstancesFilter: the limit comes
from the host aggregates' metadata (smallest wins; one bad value, the
option),
else from the ``[filter_scheduler]`` option of the same name."""

import pytest

from scheduler.filters import aggregate_limits
from tests.unit.filters import hosts

PLUGINS = [
    (aggregate_limits.AggregateIoOpsFilter, 'max_io_ops_per_host',
     'current_workload'),
    (aggregate_limits.AggregateNumInstancesFilter, 'max_instances_per_host',
     'running_vms'),
]

# every host carries 5 of the counted thing
LOADS = {'h1': 5, 'h2': 5, 'h3': 5, 'h4': 5}

CASES = [
    # (id, config limit, aggregates as (hosts, metadata value), passing)
    ('config only, above the load', 6, [], ['h1', 'h2', 'h3', 'h4']),
    ('config only, at the load', 5, [], []),
    ('metadata lowers the limit of member hosts', 6,
     [(['h1', 'h2'], '5')], ['h3', 'h4']),
    ('metadata raises the limit of member hosts', 5,
     [(['h1'], '10')], ['h1']),
    ('smallest of several aggregates wins', 5,
     [(['h1', 'h2'], '10'), (['h2'], '3')], ['h1']),
    ('bad metadata is ignored', 6,
     [(['h1'], 'lots'), (['h2'], ''), (['h3'], 'nan')],
     ['h1', 'h2', 'h3', 'h4']),
    # nova: one value that is not an integer, the option for that host
    ('bad metadata among good ones means the option', 5,
     [(['h1'], 'lots'), (['h1'], '8'), (['h2'], '8')], ['h2']),
    ('a fraction is not an integer', 5, [(['h1'], '8.5')], []),
]


def _table(key, attribute, aggregates):
    table = hosts.table(*(dict(host=host, **{attribute: load})
                          for host, load in LOADS.items()))
    table.apply_aggregates([
        {'uuid': 'agg-%d' % i, 'name': None, 'hosts': members,
         'metadata': {key: value, 'other': 'x'}, 'deleted': False}
        for i, (members, value) in enumerate(aggregates)])
    return table


@pytest.mark.parametrize('plugin_class, key, attribute', PLUGINS,
                         ids=[p[0].__name__ for p in PLUGINS])
@pytest.mark.parametrize('config_limit, aggregates, expected',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_limit(conf, plugin_class, key, attribute, config_limit,
               aggregates, expected):
    conf.set_override(key, config_limit, 'filter_scheduler')
    plugin = plugin_class(conf)
    assert plugin.vectorized
    table = _table(key, attribute, aggregates)
    assert hosts.passing(plugin, table, hosts.request()) == expected


@pytest.mark.parametrize('plugin_class, key, attribute', PLUGINS,
                         ids=[p[0].__name__ for p in PLUGINS])
def test_other_keys_do_not_count(conf, plugin_class, key, attribute):
    conf.set_override(key, 6, 'filter_scheduler')
    other = 'max_instances_per_host' if 'io_ops' in key \
        else 'max_io_ops_per_host'
    table = _table(other, attribute, [(['h1'], '1')])
    assert hosts.passing(plugin_class(conf), table, hosts.request()) == \
        ['h1', 'h2', 'h3', 'h4']


@pytest.mark.parametrize('plugin_class, key, attribute', PLUGINS,
                         ids=[p[0].__name__ for p in PLUGINS])
def test_host_leaving_the_aggregate_gets_the_config_limit(
        conf, plugin_class, key, attribute):
    conf.set_override(key, 6, 'filter_scheduler')
    table = _table(key, attribute, [(['h1', 'h2'], '2')])
    plugin = plugin_class(conf)
    assert hosts.passing(plugin, table, hosts.request()) == ['h3', 'h4']
    table.apply_aggregates([{'uuid': 'agg-0', 'name': None,
                             'hosts': ['h2'], 'metadata': {key: '2'},
                             'deleted': False}])
    assert hosts.passing(plugin, table, hosts.request()) == \
        ['h1', 'h3', 'h4']
