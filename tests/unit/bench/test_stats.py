"""Percentiles, summaries, the offline capacity oracle and target checks
of scheduler-bench."""

import math

import numpy as np
import pytest

from scheduler_bench import report
from scheduler_bench import stats
from scheduler_bench.oracle import CapacityOracle


@pytest.mark.parametrize('samples, pct, expected', [
    ([1, 2], 50, 1.5),
    ([5], 99, 5.0),
    ([3, 1, 2], 0, 1.0),
    ([3, 1, 2], 100, 3.0),
    (list(range(1, 101)), 99, 99.01),
    (list(range(1, 101)), 90, 90.1),
])
def test_percentile_interpolates_between_closest_ranks(samples, pct,
                                                       expected):
    assert stats.percentile(samples, pct) == pytest.approx(expected)


def test_percentile_of_nothing_is_nan():
    assert math.isnan(stats.percentile([], 50))


@pytest.mark.parametrize('pct', [-1, 100.5])
def test_percentile_out_of_range_is_an_error(pct):
    with pytest.raises(ValueError):
        stats.percentile([1, 2], pct)


def test_summarize_reports_milliseconds():
    summary = stats.summarize([0.001, 0.002, 0.003, 0.004])
    assert summary == {'count': 4, 'p50': 2.5, 'p90': 3.7, 'p99': 3.97,
                       'mean': 2.5, 'max': 4.0}


def test_summarize_of_nothing():
    summary = stats.summarize([])
    assert summary['count'] == 0
    assert math.isnan(summary['p99']) and math.isnan(summary['max'])


def test_rate():
    assert stats.rate(300, 2.0) == 150.0
    assert stats.rate(10, 0) == 0.0


def test_buckets_close_the_last_interval():
    groups = stats.buckets([0.0, 0.49, 0.5, 0.99, 1.0], [1, 2, 3, 4, 5],
                           (0.0, 0.5, 1.0))
    assert groups == [(0.0, 0.5, [1.0, 2.0]), (0.5, 1.0, [3.0, 4.0, 5.0])]


def _oracle():
    # two hosts: 8 VCPU / 16 GB in az1 and 4 VCPU / 32 GB in az2
    return CapacityOracle(
        capacity={'VCPU': [8, 4], 'MEMORY_MB': [16384, 32768]},
        used={'VCPU': [0, 0], 'MEMORY_MB': [0, 0]},
        zones=['az1', 'az2'],
        max_unit={'VCPU': np.array([8, 4]),
                  'MEMORY_MB': np.array([16384, 32768])})


def test_oracle_finds_a_host_that_fits():
    oracle = _oracle()
    assert oracle.fits_anywhere({'VCPU': 4, 'MEMORY_MB': 32768})
    assert oracle.feasible({'VCPU': 4, 'MEMORY_MB': 8192}) == 2
    assert not oracle.fits_anywhere({'VCPU': 9, 'MEMORY_MB': 1024})


def test_oracle_needs_every_class_on_the_same_host():
    # VCPU fits only on host 0, the memory only on host 1
    assert not _oracle().fits_anywhere({'VCPU': 6, 'MEMORY_MB': 20000})


def test_oracle_honours_the_zone():
    oracle = _oracle()
    assert oracle.fits_anywhere({'VCPU': 6}, zone='az1')
    assert not oracle.fits_anywhere({'VCPU': 6}, zone='az2')
    assert not oracle.fits_anywhere({'VCPU': 1}, zone='nowhere')


def test_oracle_honours_max_unit():
    oracle = _oracle()
    oracle.capacity['VCPU'][1] = 16     # over-committed CPUs: 16 ...
    assert oracle.feasible({'VCPU': 6}, zone='az2') == 0   # ... max_unit 4


def test_oracle_counts_placements():
    oracle = _oracle()
    oracle.place(0, {'VCPU': 8, 'MEMORY_MB': 4096})
    assert oracle.feasible({'VCPU': 1}) == 1
    assert oracle.utilization()['VCPU'] == pytest.approx(8 / 12)
    assert not len(oracle.overcommitted())
    oracle.place(0, {'VCPU': 1})
    assert list(oracle.overcommitted()) == [0]


def test_oracle_stranded_capacity():
    oracle = _oracle()
    oracle.place(0, {'VCPU': 2, 'MEMORY_MB': 16384})   # host 0: RAM full
    stranded = oracle.stranded({'VCPU': 1, 'MEMORY_MB': 2048})
    # host 0's 6 free VCPUs can't be used: 6 of 12
    assert stranded == {'VCPU': 0.5, 'MEMORY_MB': 0.0}


def test_judge_targets():
    targets = (report.Target('p99', ('a', 'p99'), '<=', 2, 'ms'),
               report.Target('rate', ('rate',), '>=', 300),
               report.Target('missing', ('nope', 'x'), '==', 0))
    rows = report.judge(targets, {'a': {'p99': 2.5}, 'rate': 300.0})
    assert [r['met'] for r in rows] == [False, True, None]
    assert rows[0]['measured'] == 2.5
    assert 'NOT MET' in report.targets_table(rows)


def test_nan_is_not_measured():
    target = report.Target('p99', ('p99',), '<=', 2)
    assert target.met(float('nan')) is None
