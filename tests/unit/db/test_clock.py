"""``scheduler.db.clock.skew_warning``: what a worker tells the operator
of a host whose clock is further from the database's than allowed, and
``DatabaseClock`` on SQLite (the database is a file of this host: its
clock is the host's; the servers': tests/functional/test_db_clock.py)."""

import datetime

import pytest

from scheduler.db import clock as db_clock


@pytest.mark.parametrize('offset', [None, 0.0, 4.9, -5.0, 5.3])
def test_within_the_allowed_skew_nothing_is_said(offset):
    assert db_clock.skew_warning(offset) is None


@pytest.mark.parametrize('offset, words', [(7.25, '7.2 s behind'),
                                           (-12.0, '12.0 s ahead of')])
def test_beyond_it_the_host_is_named_behind_or_ahead(offset, words):
    warning = db_clock.skew_warning(offset)
    assert words in warning and 'the scheduler allows' in warning


def test_on_sqlite_the_clock_is_the_hosts(db):
    before = datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None)
    now = db.clock.now()
    assert before <= now <= before + datetime.timedelta(seconds=1)
    assert db.clock.offset() is None
