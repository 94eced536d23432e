"""Fault: the message broker goes away under load and comes back.

A private RabbitMQ node (never the shared one) carries a scheduler with
two workers, 20 hosts and four conductor threads. The node is stopped for
longer than ``service_down_time``, so every tracker's report is stale
when it returns. Every call must be answered (placed, NoValidHost or
retried into a placement: no raw error), placements must flow again
within 5 s of the broker's return, and not as "0/20 hosts: not
reporting": the trackers get a period to report again. The outage is one
log line when it starts and one when it ends, per worker. Callers that
time out during the outage ask again for the same instance, as the
client's contract says, and get the claims written for them: no claim is
left that no caller was told of.
"""

import os
import time

import pytest

from tests.functional import db_state
from tests.functional import fault_load
from tests.functional import rabbit_node
from tests.functional import server as server_mod
from tests.functional import workload

BACK_WITHIN = 5.0
DOWN_TIME = 8          # service_down_time of this test, seconds
# 12 s in the suite; ``tox -e faults-long`` runs it for 70 s
OUTAGE = int(os.environ.get('SCHEDULER_BROKER_OUTAGE', DOWN_TIME + 4))
# the RPC timeout of callers that give up during the outage
IMPATIENT = 4
WORKERS = 2
# what oslo.messaging logs per reconnect attempt; none of it may reach the
# log (rpc/log_filters.BrokerOutage)
PER_ATTEMPT = ('is unreachable', 'Connection failed', 'Reconnected to AMQP',
               'Failed to consume', 'Failed to publish',
               'Failed to acknowledge', 'recoverable connection')


@pytest.fixture
def rabbit(tmp_path):
    rabbit_node.require()
    with rabbit_node.running(tmp_path / 'rabbit') as node:
        yield node


def test_broker_restart_under_load(rabbit, tmp_path, summary_line):
    server = server_mod.SchedulerServer(
        tmp_path / 'scheduler',
        'sqlite:///%s' % (tmp_path / 'scheduler.sqlite'), workers=WORKERS,
        options={'DEFAULT': {'transport_url': rabbit.transport_url()},
                 'scheduler': {'service_down_time': DOWN_TIME},
                 # as in production: queued requests and replies survive
                 # the broker's restart
                 'oslo_messaging_rabbit': {
                     'rabbit_quorum_queue': True,
                     'rabbit_transient_quorum_queue': True,
                     # reconnect within 5 s of the return, whatever the
                     # outage's length (the default backs off to 30 s)
                     'rabbit_interval_max': 2}})
    try:
        server.db_sync()
        server.start().wait_ready()
        workload.push_hosts(server, workload.host_reports(fault_load.HOSTS))
        with fault_load.Load(server, threads=4, retry_same=True) as load, \
                fault_load.Load(server, threads=2, timeout=IMPATIENT,
                                retry_same=True) as impatient:
            workload.wait_placing(load)
            rabbit.stop()
            time.sleep(OUTAGE)      # the outage's length
            rabbit.start()
            back = time.monotonic()
            # the window in which placements must flow again, and go on
            time.sleep(BACK_WITHIN + 1)
        _assert_no_orphan(server, load, impatient, summary_line)
        after = [a for a in load.answers if a[0] >= back]
        summary_line('faults: broker stopped %ds: %s; placements again '
                     'after %s s; longest wait %.1f s' % (
                         OUTAGE, load.counts(), _rounded(
                             load.first_success_after(back)),
                         load.longest_wait))
        # no call is lost: those in flight are answered after the return
        assert load.unexpected() == []
        assert load.first_success_after(back) is not None
        assert load.first_success_after(back) < BACK_WITHIN
        assert not [a for a in after if 'not reporting' in a[2]]
        assert db_state.overcommit(db_state.read_state(server.engine)) == []
        server.assert_alive()
        _assert_one_line_each_side(server, summary_line)
        # workers cut off from the broker still stop promptly on SIGTERM
        rabbit.stop()
        started = time.monotonic()
        server.stop()       # fails unless it exits 0 within its timeout
        summary_line('faults: SIGTERM with the broker away: stopped in '
                     '%.1f s' % (time.monotonic() - started))
        rabbit.start()      # so that the test's own clients can close
    finally:
        server.close()


def _assert_no_orphan(server, load, impatient, summary_line):
    """No caller holds a claim it was not told of. Both groups keep the
    client's contract: after SchedulerUnavailable they ask again for the
    same instance, and after the load a build still unanswered is given
    up with delete_allocations. A call answered only after the outage
    gives its claims back when its caller had stopped waiting
    (late_ack.replied_too_late). A claim whose answer was lost on the
    way (a reply published as the broker went down, or read by nobody
    while the caller's consumer reconnected) is answered to the retry.
    The worker cannot tell those apart from an answer delivered
    (doc/source/delivery.rst)."""
    placed = load.placed() | impatient.placed()

    def orphans():
        return {row['consumer_uuid'] for row in db_state.allocations(
            server.engine)} - placed
    try:
        db_state.wait_for(lambda: not orphans(), 15, 'no orphan claim')
    finally:
        summary_line(
            'faults: broker stopped %ds, callers waiting %d s at most: %s; '
            'retries of the same instance: %d (+%d by the conductors), '
            '%d answered with the claims held, %d given up; claims of '
            'late replies released: %d; orphan claims: %d'
            % (OUTAGE, IMPATIENT, impatient.counts(), impatient.retries(),
               load.retries(), server.count_in_log('Repeated request for'),
               len(impatient.abandoned + load.abandoned),
               server.count_in_log('after its caller stopped waiting'),
               len(orphans())))
        for consumer in sorted(orphans())[:3]:
            summary_line('faults: orphan %s: %s; in the log: %s' % (
                consumer, _asked(consumer, load, impatient),
                server.lines_with(consumer)[:4]))


def _asked(consumer, *loads):
    """Which load asked for ``consumer``, and what it was answered."""
    return ['%s %s at %.1f' % (name, kind, at)
            for name, load_ in zip(('conductor', 'impatient'), loads)
            for at, kind, _, asked in load_.answers if asked == consumer]


def _assert_one_line_each_side(server, summary_line):
    """The outage is one line when it starts and one when it ends per
    worker (rpc/log_filters.BrokerOutage), never a line per reconnect
    attempt (about 500 in a 70 s outage before)."""
    db_state.wait_for(
        lambda: server.count_in_log('Message broker reachable again')
        >= WORKERS, 30, 'every worker to say the broker is back')
    lines = [line for line in server.log_text().splitlines()
             if 'roker' in line or 'AMQP' in line]
    summary_line('faults: broker outage of %d s: %d log lines about it'
                 % (OUTAGE, len(lines)))
    assert server.count_in_log('Message broker unreachable') == WORKERS
    assert server.count_in_log('Message broker reachable again') == WORKERS
    assert not [line for line in lines
                if any(text in line for text in PER_ATTEMPT)
                and 'Message broker' not in line], lines
    assert 'Traceback' not in server.log_text()


def _rounded(value):
    return None if value is None else round(value, 2)
