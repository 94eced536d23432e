"""What counts as a database outage, and how one is summarized."""

import pytest
from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc

from scheduler.db import outages


def _operational(message):
    return sa_exc.OperationalError('SELECT 1', {}, Exception(message))


@pytest.mark.parametrize('exc, outage', [
    (db_exc.DBConnectionError(Exception('refused')), True),
    (_operational('server closed the connection'), True),
    (db_exc.DBError(_operational('the database is shutting down')), True),
    (db_exc.DBDuplicateEntry(['uuid']), False),
    (sa_exc.IntegrityError('INSERT', {}, Exception('dup')), False),
    (KeyError('bug'), False),
])
def test_is_outage(exc, outage):
    assert outages.is_outage(exc) is outage


def test_summary_leaves_out_the_sql():
    exc = db_exc.DBConnectionError(_operational(
        'FATAL:  database "s1" does not exist'))
    text = outages.summary(exc)
    assert 'does not exist' in text
    assert 'SELECT' not in text and '\n' not in text
