"""A fresh, empty scheduler database per test, dropped afterwards.

SQLite is a file in the test's tmp_path; for PostgreSQL and MariaDB a
database named ``sched_func_<hex>`` is created through an admin connection
to the ``test`` database.
"""

import contextlib
import uuid

import sqlalchemy as sa
from sqlalchemy import pool

from tests.functional import services

BACKENDS = ('sqlite', 'postgresql', 'mariadb')
_URLS = {
    'postgresql': 'postgresql+psycopg2://postgres@127.0.0.1/%s',
    'mariadb': 'mysql+pymysql://root@127.0.0.1/%s',
}
_DROP = {
    # WITH (FORCE) also ends connections a killed server may have left
    'postgresql': 'DROP DATABASE IF EXISTS %s WITH (FORCE)',
    'mariadb': 'DROP DATABASE IF EXISTS %s',
}


def _admin(backend, statement):
    engine = sa.create_engine(services.ADMIN_URLS[backend],
                              isolation_level='AUTOCOMMIT',
                              poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql(statement)
    finally:
        engine.dispose()


@contextlib.contextmanager
def fresh_database(backend, tmp_path):
    """Yield the URL of a new empty database of ``backend``."""
    if backend == 'sqlite':
        yield 'sqlite:///%s' % (tmp_path / 'scheduler.sqlite')
        return
    services.require(backend)
    name = 'sched_func_%s' % uuid.uuid4().hex[:16]
    _admin(backend, 'CREATE DATABASE %s' % name)
    try:
        yield _URLS[backend] % name
    finally:
        _admin(backend, _DROP[backend] % name)
