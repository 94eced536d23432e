"""A worker killed with SIGKILL mid-backlog loses no acknowledged report.

The report topic's server acknowledges a cast only once the batch holding
its report has committed, so the reports a dead worker had taken but not
written are delivered again by RabbitMQ, to the worker the parent starts
in its place (real RabbitMQ and PostgreSQL).
"""

import os
import signal

import pytest

from tests.functional import db_state
from tests.functional import tracker
from tests.functional import workload

REPORTS = 4000




@pytest.mark.parametrize('backend', ['postgresql'])
def test_a_killed_worker_loses_no_acknowledged_report(scheduler):
    server = scheduler(workers=1)
    first = server.started_worker_pids()[-1]
    # the worker is held while the tracker sends, so that the whole
    # backlog waits in the queue (a worker absorbing as fast as the
    # tracker sends would leave none to lose)
    os.kill(first, signal.SIGSTOP)
    try:
        tracker.push_stats(server, workload.host_reports(
            REPORTS, prefix='durable'))
    finally:
        os.kill(first, signal.SIGCONT)
    # the worker is absorbing them
    stored = db_state.wait_for(
        lambda: db_state.provider_count(server.engine), 30,
        'the first reports to be stored', interval=0.01)
    assert stored < REPORTS, 'the backlog was gone before the kill'
    _kill_then_find_all(server, first, REPORTS, 120)


HELD = 200


@pytest.mark.parametrize('backend', ['postgresql'])
def test_a_worker_killed_holding_a_batch_acknowledged_none_of_it(scheduler):
    # a batch gathered for 15 s: every report is held by the worker,
    # checked, unwritten and unacknowledged, when it is killed
    # (one report more than it holds closes the batch: sent once the
    # replacement runs, so that it need not wait out the window)
    server = scheduler(workers=1, options={'scheduler': {
        'report_batch_window': 15, 'report_batch_size': HELD + 1}})
    first = server.started_worker_pids()[-1]
    tracker.push_stats(server, workload.host_reports(HELD, prefix='held'))
    assert db_state.provider_count(server.engine) == 0
    _kill_then_find_all(server, first, HELD + 1, 60, then=lambda: (
        tracker.push_stats(server, workload.host_reports(
            1, prefix='closes-the-batch'))))


def _kill_then_find_all(server, worker, hosts, timeout, then=None):
    """SIGKILL ``worker``, and once its replacement runs, ``then()``;
    every one of the ``hosts`` reports is stored within ``timeout``
    seconds."""
    os.kill(worker, signal.SIGKILL)
    db_state.wait_for(lambda: server.started_worker_pids()[-1] != worker, 30,
                      'the parent to start another worker')
    if then is not None:
        then()
    db_state.wait_for(
        lambda: db_state.provider_count(server.engine) == hosts, timeout,
        'all %d hosts in the database' % hosts)
