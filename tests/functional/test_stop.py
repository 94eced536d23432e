"""SIGTERM loses nothing (issue 23.3, 23.7): a real scheduler-server under
load is stopped and started again at once; every call made meanwhile is
answered with a placement, none waits for the call monitor (30 s), no
claim is orphaned, and a clean stop leaves no AMQP warning in the log.

A stopped worker's service record reads down at once, and a restart
updates the record of each (host, worker index) instead of adding rows.

``timed(load)`` makes a ``fault_load.Load`` time every call; the reload
tests use it too. The figures go to the terminal summary.
"""

import time

import pytest

from tests.functional import fault_load
from tests.functional import workload
from tests import waiting

# a call answered later than this waited on something gone
PROMPT = 10.0
AMQP_CLOSING = 'during closing channel'


def timed(load):
    """Record the duration of every call ``load`` makes in
    ``load.call_waits``: [(started, seconds)] (``load.waits`` is the
    Load's own: when each call ended)."""
    load.call_waits = []
    call = load.client.select_destinations

    def select_destinations(*args, **kwargs):
        started = time.monotonic()
        try:
            return call(*args, **kwargs)
        finally:
            with load.lock:
                load.call_waits.append(
                    (started, time.monotonic() - started))
    load.client.select_destinations = select_destinations
    return load


def figures(load, since):
    """One line: calls since ``since``, how answered, longest wait."""
    waits = [wait for started, wait in load.call_waits if started >= since]
    answers = [kind for at, kind, _, _ in load.answers if at >= since]
    return '%d calls, %s, longest wait %.2f s' % (
        len(answers), dict(sorted(
            (kind, answers.count(kind)) for kind in set(answers))),
        max(waits, default=0))


@pytest.mark.parametrize('backend', ['sqlite'])
def test_sigterm_under_load_loses_no_call(scheduler, summary_line):
    server = scheduler(workers=2)
    workload.push_hosts(server, workload.host_reports(fault_load.HOSTS))
    with timed(fault_load.Load(server, threads=3)) as load:
        workload.wait_placing(load)
        mark = time.monotonic()
        server.restart()
        workload.wait_placing(load, since=time.monotonic())
    summary_line('stop: SIGTERM under load, restarted at once: %s'
                 % figures(load, mark - 1))
    assert [kind for _, kind, _, _ in load.answers if kind != 'placed'] \
        == []
    assert max(wait for _, wait in load.call_waits) < PROMPT
    assert fault_load.audit(server, load) == []
    assert AMQP_CLOSING not in server.log_text()
    stopped = (server.workdir / 'server-1.log').read_text()
    assert AMQP_CLOSING not in stopped


@pytest.mark.parametrize('backend', ['sqlite'])
def test_a_clean_stop_marks_the_record_down_and_restarts_reuse_it(
        scheduler):
    from scheduler import conf as sched_conf
    from scheduler.db import api as db_api
    from scheduler.db import services as db_services
    server = scheduler(workers=2)
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    db = db_api.Database(conf, connection=server.db_url)
    try:
        _wait_records(db, 2)
        server.stop()
        assert [s['up'] for s in db_services.list_services(db, 60)] \
            == [False, False]
        server.start().wait_ready()
        _wait_records(db, 2)
        records = db_services.list_services(db, 60)
        assert sorted((s['worker'], s['up']) for s in records) == [
            (0, True), (1, True)]
    finally:
        db.dispose()


def _wait_records(db, count):
    from scheduler.db import services as db_services
    return waiting.wait_for(
        lambda: (lambda live: live if len(live) >= count else None)(
            db_services.list_services(db, 60, live_only=True)),
        20, '%d live service records' % count)

