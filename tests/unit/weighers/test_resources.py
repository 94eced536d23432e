"""RAM/CPU/Disk weighers: a positive multiplier spreads (emptiest host
wins), a negative one packs (fullest host that fits wins)."""

import numpy as np
import pytest

from scheduler.weighers import base
from scheduler.weighers import resources

from .. import fakes

WEIGHERS = [
    (resources.RAMWeigher, 'ram_weight_multiplier', 'memory_mb_used',
     [1000, 9000, 4000]),
    (resources.CPUWeigher, 'cpu_weight_multiplier', 'vcpus_used',
     [3, 20, 10]),
    (resources.DiskWeigher, 'disk_weight_multiplier', 'local_gb_used',
     [100, 400, 250]),
]


def _table(used_field, amounts):
    return fakes.host_table(*[
        fakes.provider(i + 1, 'h%d' % i, **{used_field: amount})
        for i, amount in enumerate(amounts)])


def _best_host(weigher, table):
    rows = np.arange(table.size)
    raw = weigher.weigh_all(table, rows, fakes.request_state())
    total = weigher.multiplier * base.normalize(raw)
    return table.hosts[int(rows[np.argmax(total)])]


@pytest.mark.parametrize('cls, option, used_field, amounts', WEIGHERS,
                         ids=[w[0].__name__ for w in WEIGHERS])
def test_positive_multiplier_spreads(conf, cls, option, used_field,
                                     amounts):
    conf.set_override(option, 2.0, 'filter_scheduler')
    weigher = cls(conf)
    assert weigher.multiplier == 2.0
    assert weigher.multiplier_option == option
    assert _best_host(weigher, _table(used_field, amounts)) == 'h0'


@pytest.mark.parametrize('cls, option, used_field, amounts', WEIGHERS,
                         ids=[w[0].__name__ for w in WEIGHERS])
def test_negative_multiplier_packs(conf, cls, option, used_field, amounts):
    conf.set_override(option, -1.0, 'filter_scheduler')
    assert _best_host(cls(conf), _table(used_field, amounts)) == 'h1'


def test_weights_are_free_amounts_of_the_given_rows(conf):
    table = _table('memory_mb_used', [1000, 9000, 4000])
    weights = resources.RAMWeigher(conf).weigh_all(
        table, np.array([2, 0]), fakes.request_state())
    assert weights.tolist() == [16384.0 - 4000, 16384.0 - 1000]


def test_claims_count_as_usage(conf):
    table = fakes.host_table(
        fakes.provider(1, 'claimed', claimed={'VCPU': 20}),
        fakes.provider(2, 'reported', vcpus_used=10))
    weigher = resources.CPUWeigher(conf)
    assert _best_host(weigher, table) == 'reported'
