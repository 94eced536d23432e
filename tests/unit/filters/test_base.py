"""The filter contract: vectorized filters return a mask over every row;
per-host filters are asked only about hosts still alive."""

import numpy as np

from scheduler.filters import base

from .. import fakes


class _NamePrefixFilter(base.BaseFilter):
    """A per-host filter that records which hosts it was asked about."""

    def __init__(self, conf):
        super().__init__(conf)
        self.asked = []

    def host_passes(self, host, request):
        self.asked.append(host.host)
        return host.host.startswith('keep')


class _OddRowsFilter(base.BaseFilter):

    def filter_all(self, table, request):
        return np.arange(table.size) % 2 == 1


def _table():
    return fakes.host_table(fakes.provider(1, 'keep-a'),
                            fakes.provider(2, 'drop-b'),
                            fakes.provider(3, 'keep-c'),
                            fakes.provider(4, 'keep-d'))


def test_per_host_filter_is_asked_only_about_alive_rows(conf):
    plugin = _NamePrefixFilter(conf)
    assert not plugin.vectorized
    mask = plugin.mask_for(_table(), fakes.request_state(),
                           np.array([1, 2]))
    assert plugin.asked == ['drop-b', 'keep-c']
    # rows it was not asked about are not claimed to pass
    assert mask.tolist() == [False, False, True, False]


def test_per_host_filter_that_does_not_apply_passes_everything(conf):
    plugin = _NamePrefixFilter(conf)
    plugin.applies_to = lambda request: False
    mask = plugin.mask_for(_table(), fakes.request_state(),
                           np.array([0, 1]))
    assert mask.tolist() == [True] * 4
    assert plugin.asked == []


def test_vectorized_filter_masks_every_row(conf):
    plugin = _OddRowsFilter(conf)
    assert plugin.vectorized
    mask = plugin.mask_for(_table(), fakes.request_state(), np.array([0]))
    assert mask.tolist() == [False, True, False, True]


def test_name_is_the_class_name(conf):
    assert _OddRowsFilter(conf).name == '_OddRowsFilter'
    assert _OddRowsFilter(conf).explain(_table(), None, [0]) is None
