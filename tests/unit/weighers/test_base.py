"""normalize(): each weigher's raw weights scaled to 0..1 before the
multiplier applies."""

import numpy as np
import pytest

from scheduler.weighers import base


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
