"""ComputeFilter: disabled hosts and hosts whose tracker went quiet are out.
"""

import datetime

import numpy as np
import pytest

from scheduler.filters import compute

from .. import fakes


def _ago(seconds):
    return fakes.NOW - datetime.timedelta(seconds=seconds)


@pytest.fixture
def plugin(conf):
    conf.set_override('service_down_time', 60, 'scheduler')
    return compute.ComputeFilter(conf)


@pytest.mark.parametrize('provider_args, passes', [
    ({}, True),
    ({'reported_at': _ago(30)}, True),
    ({'reported_at': _ago(60)}, True),
    ({'reported_at': _ago(61)}, False),
    ({'reported_at': _ago(3600)}, False),
    ({'reported_at': None}, False),
    ({'disabled': True}, False),
    ({'disabled': True, 'reported_at': _ago(3600)}, False),
], ids=['fresh', '30s-old', 'exactly-down-time', 'just-stale', 'hour-old',
        'never-reported', 'disabled', 'disabled-and-stale'])
def test_host_passes(plugin, provider_args, passes):
    table = fakes.host_table(fakes.provider(1, 'h1', **provider_args))
    mask = plugin.filter_all(table, fakes.request_state())
    assert mask.tolist() == [passes]


def test_down_time_is_configurable(conf):
    conf.set_override('service_down_time', 600, 'scheduler')
    table = fakes.host_table(fakes.provider(1, 'h1', reported_at=_ago(300)))
    mask = compute.ComputeFilter(conf).filter_all(table,
                                                  fakes.request_state())
    assert mask.tolist() == [True]


def test_mask_covers_every_row(plugin):
    table = fakes.host_table(
        fakes.provider(1, 'up'),
        fakes.provider(2, 'off', disabled=True),
        fakes.provider(3, 'quiet', reported_at=_ago(120)),
        fakes.provider(4, 'up2', reported_at=_ago(5)))
    mask = plugin.filter_all(table, fakes.request_state())
    assert [table.hosts[r] for r in np.flatnonzero(mask)] == ['up', 'up2']


def test_explain_counts_disabled_and_silent_hosts(plugin):
    table = fakes.host_table(
        fakes.provider(1, 'off', disabled=True),
        fakes.provider(2, 'quiet', reported_at=_ago(120)),
        fakes.provider(3, 'quiet2', reported_at=None))
    assert plugin.explain(table, fakes.request_state(),
                          np.array([0, 1, 2])) == (
        '1 disabled, 2 not reporting for 60s')
    assert plugin.explain(table, fakes.request_state(),
                          np.array([0])) == '1 disabled'
