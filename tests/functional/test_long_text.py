"""Text the edge lets through fits the database on every backend: an
aggregate of 10,000 hosts with 255-character names (2.5 MiB of JSON) is
stored and read back whole. MariaDB's plain TEXT stops at 64 KiB, and an
aggregate of some 5,000 short host names failed there with "Data too
long for column 'hosts_json'" before migration 0006."""

import pytest

from scheduler.db import aggregates as db_aggregates
from scheduler import objects
from tests.functional import databases

UUID = '6f1a0b3c-2d4e-4f60-8a1b-2c3d4e5f6a7b'


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_a_large_aggregate_is_stored_whole(database, backend):
    hosts = ['%05d' % i + 'h' * 250 for i in range(10000)]
    metadata = {'key-%04d' % i: 'v' * 200 for i in range(500)}
    db_aggregates.save_aggregates(database, [objects.Aggregate(
        uuid=UUID, name='big', hosts=hosts, metadata=metadata)])
    [stored] = db_aggregates.load_aggregate_changes(database)
    assert stored['hosts'] == hosts and stored['metadata'] == metadata
