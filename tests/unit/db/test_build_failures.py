"""Failed builds per provider: counted by record_build_failure, reset (or
set) by a tracker report carrying ``failed_builds`` in its stats, and seen
by workers on their next refresh."""

import datetime

import pytest

from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler.host_state import HostStateCache

from .. import fakes


def _failures(db):
    return {p['nodename']: p['failed_builds']
            for p in provider_reads.list_providers(db)}


def _later(minutes):
    return datetime.datetime(2030, 1, 1) + datetime.timedelta(
        minutes=minutes)


@pytest.fixture
def nodes(db):
    fakes.report(db, 'h1', 'n1')
    fakes.report(db, 'h1', 'n2')
    fakes.report(db, 'h2')


def test_failure_counts_on_one_node_or_every_node_of_a_host(db, nodes):
    assert db_providers.record_build_failure(db, 'h1', 'n2') == 1
    assert _failures(db) == {'n1': 0, 'n2': 1, 'h2': 0}
    assert db_providers.record_build_failure(db, 'h1') == 2
    assert _failures(db) == {'n1': 1, 'n2': 2, 'h2': 0}


def test_unknown_host_or_node_counts_nothing(db, nodes):
    assert db_providers.record_build_failure(db, 'nowhere') == 0
    assert db_providers.record_build_failure(db, 'h1', 'n9') == 0
    assert set(_failures(db).values()) == {0}


@pytest.mark.parametrize('stats, expected', [
    ({'failed_builds': '0'}, 0),
    ({'failed_builds': '5'}, 5),
    ({'failed_builds': '-3'}, 0),
    ({}, 2),
    ({'failed_builds': 'many'}, 2),
    ({'failed_builds': None}, 2),
], ids=['reset', 'set', 'negative is 0', 'absent keeps the count',
        'bad value keeps the count', 'null keeps the count'])
def test_tracker_report_stats(db, stats, expected):
    fakes.report(db, 'h1')
    db_providers.record_build_failure(db, 'h1')
    db_providers.record_build_failure(db, 'h1')
    fakes.report(db, 'h1', updated_at=_later(1), stats=stats)
    assert _failures(db) == {'h1': expected}


def test_workers_see_failures_on_their_next_refresh(db, nodes):
    cache = HostStateCache(db)
    cache.refresh()
    db_providers.record_build_failure(db, 'h2')
    assert cache.refresh() == 1
    table = cache.table
    row = table.hosts.index('h2')
    assert table.failed_builds[row] == 1
    fakes.report(db, 'h2', updated_at=_later(2),
                 stats={'failed_builds': '0'})
    cache.refresh()
    assert table.failed_builds[row] == 0
