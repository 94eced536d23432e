"""Fault: the database restarts under load (PostgreSQL and MariaDB).

Each test runs a private database server (never the shared one), a
scheduler with two workers on it, 20 hosts and four conductor threads,
and restarts the database in the middle. Every call must be answered
with a placement, NoValidHost or DatabaseUnavailable (never a raw driver
error, never SQL), placements must flow again within 5 s of the
database's return, and the database must show no overcommit, no orphan
claim and no lost placement.
"""

import os
import time

import pytest

from tests.functional import fault_load
from tests.functional import private_db
from tests.functional import server as server_mod
from tests.functional import workload

BACK_WITHIN = 5.0


@pytest.fixture
def private_database(backend, tmp_path):
    why = private_db.available(backend)
    if why:
        if os.environ.get('CI') == 'true':
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    with private_db.running(backend, tmp_path / 'db') as db:
        yield db


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_database_restart_under_load(rabbitmq, private_database, tmp_path,
                                     summary_line, backend):
    server = server_mod.SchedulerServer(tmp_path / 'scheduler',
                                        private_database.url, workers=2)
    try:
        server.db_sync()
        server.start().wait_ready()
        workload.push_hosts(server, workload.host_reports(fault_load.HOSTS))
        with fault_load.Load(server, threads=4) as load:
            workload.wait_placing(load)
            private_database.restart()
            back = time.monotonic()
            # the window in which placements must flow again, and go on
            time.sleep(BACK_WITHIN + 1)
        summary_line('faults: %s restart: %s; placements again after '
                     '%s s; longest wait %.1f s; orphan claims %d' % (
                         backend, load.counts(),
                         _rounded(load.first_success_after(back)),
                         load.longest_wait,
                         len(fault_load.audit(server, load))))
        assert load.unexpected() == []
        assert load.first_success_after(back) is not None
        assert load.first_success_after(back) < BACK_WITHIN
        assert fault_load.audit(server, load) == []
        # the log says what happened, one line each, no tracebacks
        assert 'Traceback' not in server.log_text(), server.errors_in_log(
            limit=10)
        # one line when the outage starts and one when it ends, per
        # worker and topic, whatever the number of requests meanwhile
        # (a restart that no request noticed, all placed, logs none)
        down = server.count_in_log('Database unreachable')
        assert down == server.count_in_log('Database reachable again')
        assert down <= 2 * 2
        if load.counts().get('DatabaseUnavailable'):
            assert down >= 1
        assert len(server.errors_in_log(limit=100)) <= 2 * 2, \
            server.errors_in_log(limit=10)
        server.assert_alive()
    finally:
        server.close()


def _rounded(value):
    return None if value is None else round(value, 2)
