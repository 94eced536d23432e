"""A new cloud's first reports bring the planner's statistics along.

On PostgreSQL, the batch of reports that registers new hosts analyzes
the provider tables once they hold more than twice the rows the planner
last counted (``scheduler.db.statistics``); reports of hosts already
stored never do. MariaDB and SQLite keep their own statistics: nothing
is analyzed there.
"""

import datetime

import pytest

from scheduler import objects
from scheduler.db import providers as db_providers
from scheduler.db import statistics
from scheduler.model import resource_classes as rcs

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}


def _report(db, first, count, used=0):
    db_providers.record_compute_nodes(db, [
        objects.ComputeNode.from_stats('h%05d' % i, 'h%05d' % i, {
            'vcpus': 8, 'memory_mb': 8192, 'local_gb': 100,
            'vcpus_used': used, 'updated_at': datetime.datetime(
                2026, 1, 1, 0, 0, used, tzinfo=datetime.timezone.utc)})
        for i in range(first, first + count)], RATIOS)


def _estimates(db):
    """The planner's row counts of providers and inventories."""
    with db.connection() as connection:
        return dict(connection.exec_driver_sql(
            "SELECT relname, reltuples FROM pg_class WHERE relname IN "
            "('providers', 'inventories')").all())


@pytest.mark.parametrize('backend', ['postgresql'])
def test_new_hosts_bring_the_statistics_along(database):
    assert _estimates(database)['providers'] < 0     # never analyzed
    _report(database, 0, statistics.MIN_ROWS - 1)    # too few to matter
    assert _estimates(database)['providers'] < 0
    _report(database, statistics.MIN_ROWS - 1, 51)   # 150 hosts
    assert _estimates(database) == {'providers': 150, 'inventories': 450}
    _report(database, 150, 150)                      # 300: not twice 150
    _report(database, 0, 300, used=1)                # reports, no new host
    assert _estimates(database)['providers'] == 150
    _report(database, 300, 1)                        # 301: more than twice
    assert _estimates(database) == {'providers': 301, 'inventories': 903}


@pytest.mark.parametrize('backend', ['sqlite', 'mariadb'])
def test_other_databases_are_left_to_themselves(database):
    _report(database, 0, statistics.MIN_ROWS * 3)
    assert statistics.after_growth(database) is False


def test_stale_statistics():
    assert statistics.stale(-1, statistics.MIN_ROWS)
    assert not statistics.stale(-1, statistics.MIN_ROWS - 1)
    assert not statistics.stale(150, 300)
    assert statistics.stale(150, 301)
    assert not statistics.stale(10000, 10000)

