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


def _skippable_cases():
    from scheduler.driver.server_groups import GroupPlacement
    from scheduler.filters import affinity
    from scheduler.filters import availability_zone
    from scheduler.filters import server_groups
    from tests.unit.filters import hosts

    def request(zone=None, group=None, same=None, different=None):
        state = hosts.request()
        state.availability_zone = zone
        state.group = group
        for name, hosts_found in (('SameHostFilter', same),
                                  ('DifferentHostFilter', different)):
            if hosts_found is not None:  # what its preload hook returned
                state.preloaded[name] = hosts_found
        return state

    az = availability_zone.AvailabilityZoneFilter
    aff = server_groups.ServerGroupAffinityFilter
    anti = server_groups.ServerGroupAntiAffinityFilter
    soft = GroupPlacement('g', 'soft-affinity', ['h1'])
    # (id, filter class, request, applies)
    return [
        ('az: none asked', az, request(), False),
        ('az: asked', az, request(zone='az9'), True),
        ('affinity: no group', aff, request(), False),
        ('affinity: soft group', aff, request(group=soft), False),
        ('affinity: group without hosts', aff,
         request(group=GroupPlacement('g', 'affinity', [])), False),
        ('affinity: group with hosts', aff,
         request(group=GroupPlacement('g', 'affinity', ['h1'])), True),
        ('anti-affinity: soft group', anti, request(group=soft), False),
        ('anti-affinity: group', anti,
         request(group=GroupPlacement('g', 'anti-affinity', ['h1'])), True),
        ('same host: no hint', affinity.SameHostFilter, request(), False),
        ('same host: hint, no host found', affinity.SameHostFilter,
         request(same=set()), True),
        ('different host: no hint', affinity.DifferentHostFilter,
         request(), False),
        ('different host: hint', affinity.DifferentHostFilter,
         request(different={'h1'}), True),
    ]


SKIPPABLE = _skippable_cases()


def test_a_filter_that_does_not_apply_lets_every_host_through(conf):
    """The driver skips a filter whose applies_to() is False: only right
    if its filter_all would have let every host through."""
    from tests.unit.filters import hosts
    table = hosts.table(dict(host='h1'), dict(host='h2'))
    for name, cls, request, applies in SKIPPABLE:
        plugin = cls(conf)
        assert plugin.applies_to(request) == applies, name
        if not applies:
            assert plugin.filter_all(table, request).all(), name


def test_the_default_preload_hook_reads_and_keeps_nothing(conf):
    from scheduler.driver import plugins
    plugin = _OddRowsFilter(conf)
    store, request = fakes.StoredData(), fakes.request_state()
    plugins.preload([plugin], request, store)
    assert store.calls == [] and request.preloaded == {}
    assert plugin.preloaded(request) is None
