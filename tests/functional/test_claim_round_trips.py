"""Issue 8: what a claim costs the database, on SQLite, PostgreSQL and
MariaDB.

* A claim of new consumers sends a fixed number of statements: no
  separate read of previous claims where ``UPDATE ... RETURNING`` exists
  (the providers' lock answers it), and every statement reuses its
  compiled form.
* A reschedule (the consumer holds a claim) still moves the claim.
* On MariaDB a connection goes back to the pool without a ROLLBACK after
  a COMMIT, and with one when a transaction is left open, whose changes
  and locks it then undoes.
"""

import collections
import json

import pytest
import sqlalchemy as sa
from oslo_utils import uuidutils

from scheduler.db import claim_routines
from scheduler.db import claims
from scheduler.db import driver_calls
from scheduler.db import migration
from scheduler import objects
from scheduler.cmd import status
from scheduler.model import resource_classes as rcs
from scheduler.db import models
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from tests.functional import databases

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
RESOURCES = {rcs.VCPU: 1, rcs.MEMORY_MB: 512, rcs.DISK_GB: 1}
# statements of a claim of one new consumer (COMMIT is not a statement):
# PostgreSQL: the claim routine's call, in autocommit (its lock and probe,
# take, insert and stamp run inside it: scheduler.db.claim_routine).
# MariaDB: the claim procedure's CALL, in a transaction (its read of
# previous claims, lock, take, insert, bump and stamp run inside it:
# scheduler.db.claim_procedure).
# SQLite: BEGIN IMMEDIATE, lock and probe, take, insert, bump, stamp.
STATEMENTS = {'sqlite': 6, 'postgresql': 1, 'mariadb': 1}
# the transaction path's statements, where the routine is missing
# (psycopg2 sends PostgreSQL's BEGIN itself): MariaDB's read of previous
# claims, lock, take, insert, bump, stamp; PostgreSQL's lock and probe,
# take, insert, stamp
LONG_WAY = {'postgresql': 4, 'mariadb': 6}
ROUTINE = {'postgresql': 'FUNCTION', 'mariadb': 'PROCEDURE'}


def _providers(db, hosts):
    for host in hosts:
        db_providers.record_compute_node(
            db, objects.ComputeNode.from_stats(host, host, {
                'vcpus': 8, 'memory_mb': 8192, 'local_gb': 100}), RATIOS)
    return [provider_reads.find_provider(db, h)['id'] for h in hosts]


class _Statements:
    """Statements sent on ``engine`` and whether their compiled form was
    reused; those sent through the driver alone
    (``scheduler.db.driver_calls``: fixed text, nothing to compile)
    count with ``hit``."""

    def __init__(self, engine, monkeypatch):
        self.sent = []
        sa.event.listen(engine, 'before_cursor_execute', self._record)
        hit = engine.dialect.CACHE_HIT
        for name in ('scalar', 'transaction'):
            monkeypatch.setattr(driver_calls.DriverCalls, name,
                                self._recording(
                                    getattr(driver_calls.DriverCalls, name),
                                    hit))

    def _recording(self, call, hit):
        def recorded(calls, sql, params, **kwargs):
            self.sent.append((sql.split()[0], hit))
            return call(calls, sql, params, **kwargs)
        return recorded

    def _record(self, conn, cursor, statement, parameters, context, many):
        self.sent.append((statement.split()[0],
                          getattr(context, 'cache_hit', None)))


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_claim_of_new_consumers_is_a_fixed_number_of_statements(
        database, backend, monkeypatch):
    provider, = _providers(database, ['h1'])
    claims.claim_resources(database, [claims.Claim(
        uuidutils.generate_uuid(), provider, RESOURCES, 'h1')])
    statements = _Statements(database.engine, monkeypatch)
    for _ in range(3):
        claims.claim_resources(database, [claims.Claim(
            uuidutils.generate_uuid(), provider, RESOURCES, 'h1')])
    kinds = collections.Counter(kind for kind, _ in statements.sent)
    assert len(statements.sent) == 3 * STATEMENTS[backend], statements.sent
    if backend == 'sqlite':
        assert kinds['SELECT'] == 0
    if backend == 'postgresql':
        assert kinds == {'SELECT': 3}
        return
    if backend == 'mariadb':
        assert kinds == {'CALL': 3}
        assert len(claims.list_allocations(database)) == 4 * len(RESOURCES)
        return
    hit = database.engine.dialect.CACHE_HIT
    assert all(cache == hit for kind, cache in statements.sent
               if kind != 'BEGIN')


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_a_database_without_the_routine_claims_the_long_way(
        database, backend, caplog, tmp_path, capsys, monkeypatch):
    """A database synced by an earlier release has no claim routine: the
    first claim finds it missing, says so once, and every claim takes the
    transaction path: same claims, in more statements."""
    provider, = _providers(database, ['h1'])
    name = claim_routines.name(database)
    with database.engine.begin() as connection:
        connection.exec_driver_sql('DROP %s %s' % (ROUTINE[backend], name))
    statements = _Statements(database.engine, monkeypatch)
    consumers = [uuidutils.generate_uuid() for _ in range(3)]
    for consumer in consumers:
        claims.claim_resources(database, [claims.Claim(
            consumer, provider, RESOURCES, 'h1')])
    warnings = [r for r in caplog.records if name in r.getMessage()]
    assert len(warnings) == 1 and 'db sync' in warnings[0].getMessage()
    # the failed call (through the driver, then once more through
    # SQLAlchemy: scheduler.db.driver_calls), then the long way
    assert len(statements.sent) == 2 + 3 * LONG_WAY[backend], \
        statements.sent
    assert {r['consumer_uuid'] for r in claims.list_allocations(
        database)} >= set(consumers)
    # the operator's upgrade check says so, and db sync puts it back
    assert _schema_check(database, tmp_path, capsys) == (1, True)
    migration.db_sync(database)
    assert claim_routines.of(database) is not None
    assert _schema_check(database, tmp_path, capsys) == (0, False)


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_dispose_closes_the_connection_kept_for_the_claim_call(database):
    """The claim function's call keeps its connection checked out of the
    pool (``scheduler.db.driver_calls``) until ``Database.dispose``
    closes it; claims go on after, on a new one."""
    provider, = _providers(database, ['h1'])
    for _ in range(2):
        claims.claim_resources(database, [claims.Claim(
            uuidutils.generate_uuid(), provider, RESOURCES, 'h1')])
        assert database.engine.pool.checkedout() == 1
        database.dispose()
        assert database.engine.pool.checkedout() == 0


def _schema_check(database, tmp_path, capsys):
    """``scheduler-status upgrade check``'s database schema result, and
    whether its details name the claim function."""
    path = tmp_path / 'scheduler.conf'
    path.write_text('[database]\nconnection = %s\n' % database.url)
    status.main(['--config-file', str(path), 'upgrade', 'check', '--json'])
    checks = json.loads(capsys.readouterr().out)['checks']
    result, details = next((c['result'], c['details']) for c in checks
                           if c['check'] == 'Database schema')
    return result, claim_routines.name(database) in details


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_reschedule_moves_the_claim(database):
    first, second = _providers(database, ['h1', 'h2'])
    consumer = uuidutils.generate_uuid()
    claims.claim_resources(database, [claims.Claim(consumer, first,
                                                   RESOURCES, 'h1')])
    claims.claim_resources(database, [claims.Claim(consumer, second,
                                                   RESOURCES, 'h2')])
    rows = claims.list_allocations(database, consumer_uuid=consumer)
    assert {r['host'] for r in rows} == {'h2'}
    with database.reader() as session:
        claimed = dict(session.execute(
            sa.select(models.inventories.c.provider_id,
                      models.inventories.c.claimed)
            .where(models.inventories.c.resource_class == rcs.VCPU)).all())
    assert claimed == {first: 0, second: 1}


@pytest.mark.parametrize('backend', ['mariadb'])
def test_mariadb_rolls_back_only_open_transactions_on_return(
        database, monkeypatch):
    import pymysql.connections
    provider, = _providers(database, ['h1'])
    sent = []
    real = pymysql.connections.Connection.rollback

    def rollback(conn):
        sent.append('ROLLBACK')
        return real(conn)
    monkeypatch.setattr(pymysql.connections.Connection, 'rollback',
                        rollback)
    claims.claim_resources(database, [claims.Claim(
        uuidutils.generate_uuid(), provider, RESOURCES, 'h1')])
    assert sent == []
    # a transaction left open is rolled back when its connection goes
    # back to the pool: its change is undone and its locks released
    raw = database.engine.raw_connection()
    cursor = raw.cursor()
    cursor.execute('UPDATE providers SET generation = generation + 100')
    cursor.close()
    raw.close()
    assert sent == ['ROLLBACK']
    with database.writer() as session:
        generation = session.execute(sa.select(
            models.providers.c.generation)).scalar_one()
    assert generation < 100


@pytest.mark.parametrize('backend', ['mariadb'])
def test_a_user_who_may_not_create_routines_claims_the_long_way(
        database, caplog):
    """A database user granted less than ALL on its database (no CREATE
    ROUTINE): ``db sync`` warns instead of failing, and its claims take
    the transaction path."""
    user = 'sched_%s' % uuidutils.generate_uuid()[:8]
    # any host; the driver formats the text, so its '%' is doubled
    account = "'%s'@'%%%%'" % user
    schema = database.engine.url.database
    databases._admin('mariadb', "CREATE USER %s IDENTIFIED BY 'pw'"
                     % account)
    limited = None
    try:
        databases._admin('mariadb', 'GRANT SELECT, INSERT, UPDATE, DELETE, '
                         'CREATE, DROP, INDEX, ALTER ON %s.* TO %s'
                         % (schema, account))
        provider, = _providers(database, ['h1'])
        with database.engine.begin() as connection:
            connection.exec_driver_sql('DROP PROCEDURE %s'
                                       % claim_routines.name(database))
        url = database.engine.url.set(username=user, password='pw')
        limited = _database_on(url.render_as_string(hide_password=False))
        assert claim_routines.install(limited) is False
        assert claim_routines.of(limited) is None
        assert any('CREATE ROUTINE' in r.getMessage()
                   for r in caplog.records)
        consumer = uuidutils.generate_uuid()
        claims.claim_resources(limited, [claims.Claim(
            consumer, provider, RESOURCES, 'h1')])
        assert [r['consumer_uuid'] for r in claims.list_allocations(
            limited)] == [consumer] * len(RESOURCES)
    finally:
        if limited is not None:
            limited.dispose()
        databases._admin('mariadb', 'DROP USER %s' % account)


def _database_on(url):
    from scheduler import conf as sched_conf
    from scheduler.db import api as db_api
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('connection', url, 'database')
    return db_api.Database(conf)
