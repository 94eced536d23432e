"""AllHostsFilter passes every host, whatever its state."""

import datetime

from scheduler.filters import all_hosts

from .. import fakes


def test_every_host_passes(conf):
    table = fakes.host_table(
        fakes.provider(1, 'h1'),
        fakes.provider(2, 'h2', disabled=True),
        fakes.provider(3, 'h3', reported_at=fakes.NOW -
                       datetime.timedelta(days=1)))
    mask = all_hosts.AllHostsFilter(conf).filter_all(
        table, fakes.request_state(vcpus=1000))
    assert mask.tolist() == [True, True, True]


def test_empty_table_gives_empty_mask(conf):
    mask = all_hosts.AllHostsFilter(conf).filter_all(
        fakes.host_table(), fakes.request_state())
    assert mask.tolist() == []
