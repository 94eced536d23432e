"""BaseWeigher.multipliers(): aggregate metadata named like the weigher's
``[filter_scheduler]`` multiplier option overrides it for member hosts
(smallest value wins, bad values are ignored)."""

import numpy as np
import pytest

from scheduler.weighers import base
from scheduler.weighers import resources
from tests.unit.filters import hosts

OPTION = 'ram_weight_multiplier'
HOST_NAMES = ['h1', 'h2', 'h3', 'h4']

CASES = [
    # (id, aggregates as (hosts, metadata), multipliers of h1..h4)
    ('no aggregate', [], [2.0] * 4),
    ('aggregate without the key', [(['h1'], {'cpu_weight_multiplier': '5'})],
     [2.0] * 4),
    ('override for member hosts',
     [(['h1', 'h2'], {OPTION: '-1.0'})], [-1.0, -1.0, 2.0, 2.0]),
    ('override may be larger than the config', [(['h3'], {OPTION: '10'})],
     [2.0, 2.0, 10.0, 2.0]),
    ('smallest of several wins',
     [(['h1', 'h2'], {OPTION: '3'}), (['h2'], {OPTION: '0.5'})],
     [3.0, 0.5, 2.0, 2.0]),
    ('bad values are ignored',
     [(['h1'], {OPTION: 'heavy'}), (['h2'], {OPTION: ''}),
      (['h3'], {OPTION: 'nan'}), (['h4'], {OPTION: '-inf'})], [2.0] * 4),
    # nova: one value that is not a number, the configured multiplier
    ('a bad value among good ones means the option',
     [(['h1'], {OPTION: 'heavy'}), (['h1'], {OPTION: '4'}),
      (['h2'], {OPTION: '3'}), (['h2'], {OPTION: '5'})],
     [2.0, 3.0, 2.0, 2.0]),
]


def _table(aggregates):
    table = hosts.table(*(dict(host=h) for h in HOST_NAMES))
    table.apply_aggregates([
        {'uuid': 'agg-%d' % i, 'name': None, 'hosts': members,
         'metadata': metadata, 'deleted': False}
        for i, (members, metadata) in enumerate(aggregates)])
    return table


@pytest.mark.parametrize('aggregates, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_multipliers(conf, aggregates, expected):
    conf.set_override(OPTION, 2.0, 'filter_scheduler')
    weigher = resources.RAMWeigher(conf)
    table = _table(aggregates)
    assert weigher.multipliers(table, np.arange(4)).tolist() == expected
    # only the rows asked about, in their order
    assert weigher.multipliers(table, np.array([3, 0])).tolist() == \
        [expected[3], expected[0]]


def test_weigher_without_option_ignores_metadata(conf):
    class Plain(base.BaseWeigher):
        pass

    table = _table([(['h1'], {OPTION: '-5'})])
    assert Plain(conf).multipliers(table, np.arange(4)).tolist() == \
        [1.0] * 4


def test_override_turns_spreading_into_packing_on_member_hosts(conf):
    # h1 and h2 pack (negative override) while the config spreads
    table = hosts.table(dict(host='h1', memory_mb_used=1000),
                        dict(host='h2', memory_mb_used=8000),
                        dict(host='h3', memory_mb_used=0))
    weigher = resources.RAMWeigher(conf)
    request = hosts.request()

    def best(rows):
        rows = np.array(rows)
        total = weigher.multipliers(table, rows) * base.normalize(
            weigher.weigh_all(table, rows, request))
        return table.hosts[int(rows[np.argmax(total)])]

    assert best([0, 1]) == 'h1'
    table.apply_aggregates([{'uuid': 'pack', 'name': None,
                             'hosts': ['h1', 'h2'],
                             'metadata': {OPTION: '-1'}, 'deleted': False}])
    assert best([0, 1]) == 'h2'
    assert best([0, 1, 2]) == 'h3'
