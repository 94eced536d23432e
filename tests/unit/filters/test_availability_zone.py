"""AvailabilityZoneFilter: only hosts in the requested zone; no zone asked
for means every host passes."""

import pytest

from scheduler.filters import availability_zone

from .. import fakes


@pytest.fixture
def table():
    return fakes.host_table(
        fakes.provider(1, 'a1', availability_zone='az1'),
        fakes.provider(2, 'b1', availability_zone='az2'),
        fakes.provider(3, 'a2', availability_zone='az1'),
        fakes.provider(4, 'none'))


@pytest.mark.parametrize('zone, expected', [
    (None, ['a1', 'b1', 'a2', 'none']),
    ('', ['a1', 'b1', 'a2', 'none']),
    ('az1', ['a1', 'a2']),
    ('az2', ['b1']),
    ('az-unknown', []),
])
def test_hosts_in_zone(conf, table, zone, expected):
    plugin = availability_zone.AvailabilityZoneFilter(conf)
    mask = plugin.filter_all(table,
                             fakes.request_state(availability_zone=zone))
    assert len(mask) == table.size
    assert [h for h, ok in zip(table.hosts, mask) if ok] == expected


def test_explain_names_the_zone(conf, table):
    plugin = availability_zone.AvailabilityZoneFilter(conf)
    request = fakes.request_state(availability_zone='az2')
    assert plugin.explain(table, request, [0, 2]) == "not in zone 'az2'"
