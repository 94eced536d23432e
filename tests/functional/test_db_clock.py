"""``scheduler.db.clock``: the database server's clock, read once a
minute, on every backend.

``Database.clock.now()`` is within a round trip of the server's own
UTC time (on SQLite, this host's clock), and costs no statement
between two readings; a failed reading leaves the last one in use.
"""

import datetime
import time

import pytest
import sqlalchemy as sa

from scheduler.db import clock as db_clock
from tests.functional import databases

#: the server's UTC time, as each backend tells it
SERVER_UTC = {
    'postgresql': "SELECT clock_timestamp() AT TIME ZONE 'UTC'",
    'mariadb': 'SELECT UTC_TIMESTAMP(6)',
    'sqlite': "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')",
}


def _server_now(database, backend):
    with database.engine.connect() as connection:
        value = connection.execute(sa.text(SERVER_UTC[backend])).scalar()
    if isinstance(value, str):
        value = datetime.datetime.fromisoformat(value)
    return value


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_the_clock_is_the_servers(database, backend):
    before = _server_now(database, backend)
    now = database.clock.now()
    after = _server_now(database, backend)
    assert now.tzinfo is None
    assert before - datetime.timedelta(seconds=0.5) <= now <= (
        after + datetime.timedelta(seconds=0.5))


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_one_reading_a_minute(database, backend):
    clock = db_clock.DatabaseClock(database.engine)
    statements = []
    sa.event.listen(database.engine, 'before_cursor_execute',
                    lambda *args: statements.append(args[2]))
    first = clock.now()
    time.sleep(0.05)
    second = clock.now()
    assert len(statements) == 1
    assert second - first >= datetime.timedelta(seconds=0.05)
    assert abs(clock.offset()) < 1.0


@pytest.mark.parametrize('backend', ['postgresql'])
def test_a_failed_reading_keeps_the_last(database, backend):
    clock = db_clock.DatabaseClock(database.engine, refresh=0.0)
    first = clock.now()
    database.engine.dispose()
    clock.engine = sa.create_engine('postgresql+psycopg2://nobody@'
                                    '127.0.0.1:1/none')
    assert clock.refresh() is None
    assert clock.now() >= first
