"""Migrations: a new database is at no revision; db_sync brings it to the
head, and running it again is harmless."""

from scheduler.db import api as db_api
from scheduler.db import migration


def test_sync_goes_to_head_and_is_repeatable(conf, tmp_path):
    database = db_api.Database(conf, 'sqlite:///%s' % (tmp_path / 'm.db'))
    try:
        assert migration.db_version(database) is None
        migration.db_sync(database)
        head = migration.head_revision()
        assert head and migration.db_version(database) == head
        migration.db_sync(database)
        assert migration.db_version(database) == head
        with database.reader() as session:
            assert db_api.current_change_seq(session) == 0
    finally:
        database.dispose()
