"""HostStateCache and aggregates: a refresh pulls aggregate changes
(tombstones included), and a host's zone is its aggregates' zone, else the
one its tracker reports, else the default zone."""

import datetime

import numpy as np
import pytest

from scheduler import objects
from scheduler.db import aggregates as db_aggregates
from scheduler.filters import availability_zone
from scheduler.host_state import HostStateCache

from .. import fakes

A1 = '1a2b3c4d-0000-4000-8000-000000000001'
A2 = '1a2b3c4d-0000-4000-8000-000000000002'


def _save(db, uuid, hosts, **metadata):
    db_aggregates.save_aggregates(db, [objects.Aggregate(
        uuid=uuid, hosts=list(hosts), metadata=metadata)])


def _later(minutes):
    return datetime.datetime(2030, 1, 1) + datetime.timedelta(
        minutes=minutes)


def _zones(cache):
    table = cache.table
    return {table.hosts[row]: table.view(row).availability_zone
            for row in range(table.size)}


def _aggregates_of(cache, host):
    return sorted(a['uuid'] for a in cache.table.aggregates.of_host(host))


@pytest.fixture
def cache(db):
    fakes.report(db, 'h1', availability_zone='reported')
    fakes.report(db, 'h2')
    return HostStateCache(db, default_zone='nova')


def test_cold_start_loads_aggregates(db, cache):
    _save(db, A1, ['h1', 'h2'], ssd='true')
    cache.refresh()
    assert _aggregates_of(cache, 'h1') == [A1]
    assert cache.table.aggregates.metadata_values('h2', 'ssd') == ['true']


def test_refresh_pulls_new_changed_and_deleted_aggregates(db, cache):
    cache.refresh()
    _save(db, A1, ['h1'], ssd='true')
    _save(db, A2, ['h2'])
    cache.refresh()
    assert (_aggregates_of(cache, 'h1'), _aggregates_of(cache, 'h2')) == \
        ([A1], [A2])
    _save(db, A1, ['h2'], ssd='false')
    cache.refresh()
    assert (_aggregates_of(cache, 'h1'), _aggregates_of(cache, 'h2')) == \
        ([], [A1, A2])
    assert cache.table.aggregates.metadata_values('h2', 'ssd') == ['false']
    db_aggregates.delete_aggregate(db, A1)
    cache.refresh()
    assert _aggregates_of(cache, 'h2') == [A2]
    assert A1 not in cache.table.aggregates.by_uuid


def test_zone_from_report_else_default(db, cache):
    cache.refresh()
    assert _zones(cache) == {'h1': 'reported', 'h2': 'nova'}


def test_aggregate_zone_wins_until_the_host_leaves(db, cache):
    cache.refresh()
    _save(db, A1, ['h1', 'h2'], availability_zone='az1')
    cache.refresh()
    assert _zones(cache) == {'h1': 'az1', 'h2': 'az1'}
    _save(db, A1, ['h2'], availability_zone='az1')
    cache.refresh()
    assert _zones(cache) == {'h1': 'reported', 'h2': 'az1'}
    db_aggregates.delete_aggregate(db, A1)
    cache.refresh()
    assert _zones(cache) == {'h1': 'reported', 'h2': 'nova'}


def test_zone_of_a_host_reported_after_its_aggregate(db, cache):
    _save(db, A1, ['h3'], availability_zone='az1')
    cache.refresh()
    fakes.report(db, 'h3', availability_zone='reported')
    cache.refresh()
    assert _zones(cache)['h3'] == 'az1'


def test_report_changes_the_zone_only_outside_aggregates(db, cache):
    _save(db, A1, ['h1'], availability_zone='az1')
    cache.refresh()
    fakes.report(db, 'h1', updated_at=_later(1), availability_zone='new')
    fakes.report(db, 'h2', updated_at=_later(1), availability_zone='new')
    cache.refresh()
    assert _zones(cache) == {'h1': 'az1', 'h2': 'new'}


def test_zone_filter_follows_aggregate_zones(db, cache, conf):
    plugin = availability_zone.AvailabilityZoneFilter(conf)
    request = fakes.request_state(availability_zone='az1')

    def passing():
        table = cache.table
        mask = plugin.filter_all(table, request)
        return [table.hosts[r] for r in np.flatnonzero(mask)]

    cache.refresh()
    assert passing() == []
    _save(db, A1, ['h2'], availability_zone='az1')
    cache.refresh()
    assert passing() == ['h2']
