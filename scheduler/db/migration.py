"""Schema migrations with alembic: ``db_sync`` and ``db_version``.

The alembic environment ships inside the package
(``scheduler/db/migrations``), so ``scheduler-manage db sync`` works from
an installed copy with no alembic.ini on disk.
"""

import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration

from scheduler.db import claim_routines

_SCRIPT_LOCATION = os.path.join(os.path.dirname(__file__), 'migrations')


def _alembic_config(connection):
    cfg = alembic_config.Config()
    cfg.set_main_option('script_location', _SCRIPT_LOCATION)
    cfg.attributes['connection'] = connection
    return cfg


def db_sync(database, revision='head'):
    """Upgrade the schema to ``revision`` (default: the newest) and, at
    the newest, create this release's claim routine (PostgreSQL's
    function, MariaDB's procedure: ``scheduler.db.claim_routines``; a
    schema object that is no table, so
    it is created here from the code rather than frozen in a
    migration)."""
    with database.engine.begin() as connection:
        alembic_command.upgrade(_alembic_config(connection), revision)
    if revision in ('head', head_revision()):
        claim_routines.install(database)


def db_version(database):
    """The schema revision the database is at, or None if never synced."""
    with database.engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def head_revision():
    from alembic import script
    scripts = script.ScriptDirectory(_SCRIPT_LOCATION)
    return scripts.get_current_head()


def is_known_revision(revision):
    """Is ``revision`` one of this release's migrations? A revision it
    does not know comes from a later release (migrations only add)."""
    from alembic import script
    from alembic.util import exc as alembic_exc
    scripts = script.ScriptDirectory(_SCRIPT_LOCATION)
    try:
        return scripts.get_revision(revision) is not None
    except alembic_exc.CommandError:
        return False


def missing_sqlite_file(conf):
    """Why a SQLite URL can't be used as is, or None."""
    url = conf.database.connection or ''
    if not url.startswith('sqlite:///') or ':memory:' in url:
        return None
    path = url[len('sqlite:///'):].split('?', 1)[0]
    if os.path.exists(path):
        return None
    return ('the database file %s does not exist (connection %s): pass '
            '--config-file with your [database] connection, or run '
            '"scheduler-manage db sync" to create it' % (
                os.path.abspath(path), url))
