"""RawReader (the poller's reads through the driver's cursors) and the
feed's position read through it, on SQLite."""

import shutil

import pytest
from sqlalchemy import exc as sa_exc

from scheduler.db import changes
from scheduler.db import driver_connections
from scheduler.db import models
from scheduler.db import claims
from scheduler.db import outages
from scheduler.model import resource_classes as rcs

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
C2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'


def _select_one(reader):
    with reader.cursor() as cursor:
        cursor.execute('SELECT 1')
        return cursor.fetchall(), cursor.connection


def test_a_kept_connection_serves_every_block_outside_the_pool(db):
    reader = db.raw_reader(keep=True)
    rows, first = _select_one(reader)
    assert rows == [(1,)]
    _, second = _select_one(reader)
    assert second is first
    # detached: the pool does not count it, and hands out others
    assert db.engine.pool.checkedout() == 0
    with db.engine.connect() as connection:
        assert connection.connection.dbapi_connection is not first
    reader.close()
    _, third = _select_one(reader)
    assert third is not first


def test_a_borrowed_connection_goes_back_to_the_pool(db):
    reader = db.raw_reader()
    _select_one(reader)
    assert db.engine.pool.checkedout() == 0
    assert reader._held is None


def test_a_driver_error_is_sqlalchemys_and_the_next_block_reconnects(db):
    reader = db.raw_reader(keep=True)
    _, broken = _select_one(reader)
    broken.close()  # the server dropped it
    with pytest.raises(sa_exc.DBAPIError) as caught:
        _select_one(reader)
    assert caught.value.connection_invalidated
    rows, fresh = _select_one(reader)
    assert rows == [(1,)] and fresh is not broken


def test_a_connection_that_fails_as_it_is_set_up_is_not_kept(
        db, monkeypatch):
    """A connection that breaks between the pool's checkout and the
    reader's autocommit is discarded, not left checked out (each such
    failure used to hold one of the pool's connections for good)."""
    reader = db.raw_reader()
    reader.dialect = 'postgresql'    # the path that sets autocommit

    def broken(connection):
        raise db.engine.dialect.loaded_dbapi.OperationalError('gone')
    monkeypatch.setattr(driver_connections, 'enter_autocommit', broken)
    with pytest.raises(sa_exc.DBAPIError):
        _select_one(reader)
    assert db.engine.pool.checkedout() == 0
    assert reader._held is None


def test_an_unreachable_database_is_an_outage(conf, tmp_path):
    from scheduler.db import api as db_api
    folder = tmp_path / 'gone'
    folder.mkdir()
    conf.set_override('connection', 'sqlite:///%s' % (folder / 'db.sqlite'),
                      'database')
    database = db_api.Database(conf)
    reader = database.raw_reader(keep=True)
    shutil.rmtree(folder)
    database.engine.dispose()
    with pytest.raises(sa_exc.DBAPIError) as caught:
        _select_one(reader)
    assert outages.is_outage(caught.value)


def test_an_error_in_the_block_closes_the_connection(db):
    reader = db.raw_reader(keep=True)
    _, first = _select_one(reader)
    with pytest.raises(KeyError):
        with reader.cursor():
            raise KeyError('a bug of the caller')
    _, second = _select_one(reader)
    assert second is not first


def test_a_block_is_one_transaction(db):
    """SQLite: the block's statements read one snapshot, so a write
    committed between them is seen by the next block only."""
    provider = fakes.report(db, 'h1')
    reader = db.raw_reader(keep=True)
    with reader.cursor() as cursor:
        before = changes.poll_position(cursor, reader.dialect)
        claims.claim_resources(db, [claims.Claim(C1, provider,
                                                 {rcs.VCPU: 1})])
        assert changes.poll_position(cursor, reader.dialect) == before
    with reader.cursor() as cursor:
        assert changes.poll_position(cursor, reader.dialect) != before


@pytest.mark.parametrize('legacy', [False, True])
def test_moved_stripes_only_make_the_same_position(db, legacy):
    """The MySQL/MariaDB read (only the stripes that moved since the last
    position come back) gives the position the full read gives."""
    db.legacy_change_counter = legacy
    h1, h2 = fakes.report(db, 'h1'), fakes.report(db, 'h2')
    reader = db.raw_reader()
    with reader.cursor() as cursor:
        since = changes.poll_position(cursor, 'mysql', legacy=legacy)
        assert since == changes.poll_position(cursor, 'sqlite',
                                              legacy=legacy)
        assert changes.poll_position(cursor, 'mysql', since,
                                     legacy) == since
    claims.claim_resources(db, [claims.Claim(C1, h1, {rcs.VCPU: 1})])
    claims.claim_resources(db, [claims.Claim(C2, h2, {rcs.VCPU: 1})])
    with reader.cursor() as cursor:
        full = changes.poll_position(cursor, 'sqlite', legacy=legacy)
        moved = changes.poll_position(cursor, 'mysql', since, legacy)
    assert moved == full != since
    assert (full.legacy is not None) == legacy


def test_sqlites_union_of_stripes_reads_what_the_or_reads(db):
    """SQLite reads the stripes that moved one SELECT each (its planner
    scanned the table for their OR): the same rows."""
    ids = [fakes.report(db, 'h%d' % i) for i in range(6)]
    reader = db.raw_reader()
    with reader.cursor() as cursor:
        since = changes.poll_position(cursor, reader.dialect)
    for consumer, provider in zip((C1, C2), ids[1::3]):
        claims.claim_resources(db, [claims.Claim(consumer, provider,
                                                 {rcs.VCPU: 1})])
    fakes.report(db, 'h0', vcpus_used=2)
    select = 'SELECT id, generation FROM providers'
    with reader.cursor() as cursor:
        until = changes.poll_position(cursor, reader.dialect)
        union = changes.select_changed(select, models.providers, since,
                                       until, 'sqlite')
        assert 'INDEXED BY ix_providers_feed' in union
        found = {}
        for sql in (union, changes.select_changed(
                select, models.providers, since, until)):
            cursor.execute(sql)
            found[sql] = sorted(cursor.fetchall())
    assert list(found.values())[0] == list(found.values())[1]
    assert sorted(id_ for id_, _ in list(found.values())[0]) == sorted(
        [ids[0], ids[1], ids[4]])
