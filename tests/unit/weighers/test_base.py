"""normalize(): each weigher's raw weights scaled to 0..1 before the
multiplier applies."""

import numpy as np
import pytest

from scheduler.driver import plugins
from scheduler.weighers import base
from scheduler.weighers import resources

from .. import fakes


@pytest.mark.parametrize('raw, expected', [
    ([], []),
    ([7], [0.0]),
    ([3, 3, 3], [0.0, 0.0, 0.0]),
    ([0, 5, 10], [0.0, 0.5, 1.0]),
    ([10, 0, 5], [1.0, 0.0, 0.5]),
    ([-4, -2, 0], [0.0, 0.5, 1.0]),
    ([1e12, 1e12 + 1], [0.0, 1.0]),
], ids=['empty', 'single', 'all-equal', 'ascending', 'unordered',
        'negative', 'huge'])
def test_normalize(raw, expected):
    result = base.normalize(raw)
    assert result.dtype == np.float64
    assert result.tolist() == pytest.approx(expected)


def test_normalize_accepts_integer_arrays_without_changing_them():
    raw = np.array([2, 4], dtype=np.int64)
    assert base.normalize(raw).tolist() == [0.0, 1.0]
    assert raw.tolist() == [2, 4]


def test_weigher_without_option_has_multiplier_one(conf):
    class Plain(base.BaseWeigher):
        pass

    assert Plain(conf).multiplier == 1.0
    assert Plain(conf).name == 'Plain'


class _Fixed(base.BaseWeigher):
    """Weighs each row by ``raw[row]``, multiplier 2.0."""

    def __init__(self, raw, multiplier=2.0):
        self.raw = np.asarray(raw, dtype=np.float64)
        self.multiplier = multiplier

    def weigh_all(self, table, rows, request):
        return self.raw[rows]


# (raw weights, multiplier, what weighted() adds: None = nothing)
WEIGHTED = [
    ('spread', [0, 5, 10], 2.0, [0.0, 1.0, 2.0]),
    ('negative multiplier', [0, 5, 10], -1.0, [0.0, -0.5, -1.0]),
    ('all equal adds nothing', [4, 4, 4], 2.0, None),
    ('a single row adds nothing', [4], 2.0, None),
    ('all equal, infinite multiplier: as before, NaN', [4, 4], np.inf,
     [np.nan, np.nan]),
]


@pytest.mark.parametrize('raw, multiplier, expected',
                         [w[1:] for w in WEIGHTED],
                         ids=[w[0] for w in WEIGHTED])
def test_weighted_is_multiplier_times_normalized(raw, multiplier,
                                                 expected):
    from tests.unit.filters import hosts
    table = hosts.table(*[dict(host='h%d' % i) for i in range(len(raw))])
    weigher = _Fixed(raw, multiplier)
    rows = np.arange(len(raw))
    with np.errstate(invalid='ignore'):  # inf * 0
        result = weigher.weighted(table, rows, None)
        every = weigher.multipliers(table, rows) * base.normalize(
            weigher.raw)
    if expected is None:
        assert result is None
        # what it stands for: adding zeros
        assert not every.any()
    else:
        np.testing.assert_array_equal(result, expected)
        np.testing.assert_array_equal(result, every)


def test_the_default_preload_hook_reads_and_keeps_nothing(conf):
    weigher = resources.RAMWeigher(conf)
    store, request = fakes.StoredData(), fakes.request_state()
    plugins.preload([weigher], request, store)
    assert store.calls == [] and request.preloaded == {}
    assert weigher.preloaded(request) is None
