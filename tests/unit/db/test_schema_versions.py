"""Which schema revisions a release runs on: its own head, and any later
release's (migrations only add); never an older one."""

import pytest

from scheduler import exception
from scheduler.service import startup_checks
from scheduler.db import migration


def _stamp(db, revision):
    with db.engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE alembic_version SET version_num = '%s'" % revision)


def test_server_starts_on_its_own_head(conf, db):
    startup_checks.check_database(conf)


def test_server_starts_on_a_later_releases_schema(conf, db):
    _stamp(db, '9001')
    assert not migration.is_known_revision('9001')
    startup_checks.check_database(conf)


def test_server_refuses_an_older_schema_with_the_db_sync_hint(conf, db):
    _stamp(db, '0001')
    with pytest.raises(exception.InvalidRequest, match='db sync'):
        startup_checks.check_database(conf)
