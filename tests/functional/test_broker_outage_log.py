"""A broker outage is one log line when it starts and one when it ends,
per worker process (issue 24 point 7).

A private RabbitMQ node (never the shared one) carries a scheduler with
two workers and one conductor calling through the outage. Before, each
worker logged an ERROR line per reconnect attempt per connection (``AMQP
server on ... is unreachable ... Trying again in 1 seconds``): about 500
lines in a 70 s outage. Now each worker logs ``Message broker
unreachable`` once and ``Message broker reachable again`` once.
"""

import os
import time

import pytest

from tests.functional import db_state
from tests.functional import fault_load
from tests.functional import rabbit_node
from tests.functional import server as server_mod
from tests.functional import workload

OUTAGE = 4
WORKERS = 2
# what oslo.messaging logs per attempt; none of it may reach the log
PER_ATTEMPT = ('is unreachable', 'Connection failed', 'Reconnected to AMQP',
               'Failed to consume', 'Failed to publish',
               'Failed to acknowledge', 'recoverable connection')


@pytest.fixture
def rabbit(tmp_path):
    why = rabbit_node.available()
    if why:
        if os.environ.get('CI') == 'true':
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    with rabbit_node.running(tmp_path / 'rabbit') as node:
        yield node


def test_a_broker_outage_is_two_lines_per_worker(rabbit, tmp_path,
                                                 summary_line):
    server = server_mod.SchedulerServer(
        tmp_path / 'scheduler',
        'sqlite:///%s' % (tmp_path / 'scheduler.sqlite'), workers=WORKERS,
        options={'DEFAULT': {'transport_url': rabbit.transport_url()}})
    try:
        server.db_sync()
        server.start().wait_ready()
        workload.push_hosts(server, workload.host_reports(5))
        with fault_load.Load(server, threads=1) as load:
            rabbit.stop()
            time.sleep(OUTAGE)
            rabbit.start()
            back = time.monotonic()
            db_state.wait_for(
                lambda: load.first_success_after(back) is not None, 30,
                'a placement after the broker is back')
            db_state.wait_for(
                lambda: server.count_in_log(
                    'Message broker reachable again') >= WORKERS, 30,
                'every worker to say the broker is back')
            time.sleep(3)     # the other connections reconnect meanwhile
        lines = [line for line in server.log_text().splitlines()
                 if 'roker' in line or 'AMQP' in line]
        summary_line('faults: broker outage of %d s: %d log lines about '
                     'it' % (OUTAGE, len(lines)))
        assert server.count_in_log('Message broker unreachable') == WORKERS
        assert server.count_in_log(
            'Message broker reachable again') == WORKERS
        assert not [line for line in lines
                    if any(text in line for text in PER_ATTEMPT)
                    and 'Message broker' not in line], lines
        assert 'Traceback' not in server.log_text()
    finally:
        server.close()
