"""MariaDB's claim procedure (``scheduler.db.claim_procedure``) where it
could differ from the transaction path it stands for: the locks its
probe takes, the collation its variables compare with, the size of the
claims it takes, and its installation."""

import threading

import pytest
import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_utils import uuidutils

from scheduler import objects
from scheduler.db import claim_procedure
from scheduler.db import claim_routines
from scheduler.db import claims
from scheduler.db import migration
from scheduler.db import provider_reads
from scheduler.db import providers as db_providers
from scheduler.model import resource_classes as rcs
from tests.functional import test_claim_round_trips as round_trips

pytestmark = pytest.mark.parametrize('backend', ['mariadb'])

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
THREADS, CLAIMS = 4, 60


def _provider(db, host='h1', vcpus=1000):
    db_providers.record_compute_node(db, objects.ComputeNode.from_stats(
        host, host, {'vcpus': vcpus, 'memory_mb': 1000000,
                     'local_gb': 100000}), RATIOS)
    return provider_reads.find_provider(db, host)['id']


def test_claims_of_new_consumers_in_one_index_gap_do_not_deadlock(
        database):
    """Concurrent claims on one provider, without the deadlock retry: the
    probe is a consistent read, so no two claims hold shared gap locks on
    the consumer index that their INSERTs then wait on (a probe that
    locked deadlocked 1 to 5 times in 240 claims)."""
    assert claim_routines.of(database) is claim_procedure
    provider = _provider(database)
    once = claims.claim_resources.__wrapped__   # no retry_on_deadlock
    deadlocks, written = [], []

    def claim_many():
        for _ in range(CLAIMS):
            try:
                once(database, [claims.Claim(uuidutils.generate_uuid(),
                                             provider, {rcs.VCPU: 1}, 'h1')])
                written.append(1)
            except db_exc.DBDeadlock as exc:
                deadlocks.append(exc)
    threads = [threading.Thread(target=claim_many) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert deadlocks == []
    assert len(written) == THREADS * CLAIMS
    assert len(claims.list_allocations(database)) == THREADS * CLAIMS


def test_a_database_whose_default_collation_is_not_its_tables(database):
    """The procedure is created under the database's default collation;
    its variables compare with the columns in theirs (``TYPE OF``): a
    default changed after the tables were made costs no claim."""
    provider = _provider(database)
    name = database.engine.url.database
    with database.engine.begin() as connection:
        connection.exec_driver_sql(
            'ALTER DATABASE %s COLLATE utf8mb4_unicode_ci' % name)
        connection.exec_driver_sql('DROP PROCEDURE %s'
                                   % claim_procedure.NAME)
    # new connections: a session reads its database's default at USE
    database.engine.dispose()
    assert claim_procedure.install(database)
    consumer = uuidutils.generate_uuid()
    claims.claim_resources(database, [claims.Claim(
        consumer, provider, {rcs.VCPU: 1}, 'h1')])
    # and its probe still finds the consumer's claim
    assert claims.claim_resources(database, [claims.Claim(
        consumer, provider, {rcs.VCPU: 1}, 'h1')], unless_held=True) is False


def test_a_claim_of_many_rows_takes_the_transaction_path(database,
                                                         monkeypatch):
    """The procedure reads its lists element by element (each read
    parses the list again): a claim of more than ``MAX_ROWS`` allocation
    rows is the transaction path's, one multi-row INSERT."""
    provider = _provider(database)
    resources = {rcs.VCPU: 1, rcs.MEMORY_MB: 1, rcs.DISK_GB: 1}
    many = claim_procedure.MAX_ROWS // len(resources) + 1
    statements = round_trips._Statements(database.engine, monkeypatch)
    claims.claim_resources(database, [claims.Claim(
        uuidutils.generate_uuid(), provider, resources, 'h1')
        for _ in range(many)])
    kinds = {kind for kind, _ in statements.sent}
    assert 'CALL' not in kinds and 'INSERT' in kinds
    assert len(claims.list_allocations(database)) == many * len(resources)
    statements.sent.clear()
    claims.claim_resources(database, [claims.Claim(
        uuidutils.generate_uuid(), provider, resources, 'h1')])
    assert [kind for kind, _ in statements.sent] == ['CALL']


def test_db_sync_twice_keeps_the_procedure(database):
    """A procedure that is there is this release's (its name is its
    definition's digest): a second sync leaves it, never drops it under
    running workers."""
    with database.engine.connect() as connection:
        created = connection.execute(sa.text(
            'SELECT created FROM information_schema.routines WHERE '
            'routine_schema = DATABASE() AND routine_name = :name'),
            {'name': claim_procedure.NAME}).scalar()
    migration.db_sync(database)
    assert claim_procedure.install(database)
    with database.engine.connect() as connection:
        assert connection.execute(sa.text(
            'SELECT created FROM information_schema.routines WHERE '
            'routine_schema = DATABASE() AND routine_name = :name'),
            {'name': claim_procedure.NAME}).scalar() == created
