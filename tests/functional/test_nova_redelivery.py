"""Issue 21 under faults: a call nova's own client sent to a worker that
dies before answering is answered by another worker, within seconds and
long before nova's call monitor (30 s in ``nova_driver.py``) would give up.

A real ``scheduler-server`` (2 workers, ``[nova] enabled``, RabbitMQ,
SQLite) and nova 34's unmodified client in ``CALLERS`` processes of
``nova_driver.py``. The test holds the database locked so that both
workers have taken boots they cannot finish, SIGKILLs one worker and lets
the database go. Nova's topic is served like the scheduler's own
(``scheduler.rpc.late_ack.CallServer``): a call is acknowledged only once
answered, so the broker hands the dead worker's calls to the other one,
which says so in its log, and its replies reach the waiting conductors.
Every boot is placed and no claim is left without an instance.

Twice: without Placement, and with the claims written back to a real
Placement 16 (hosts fed from it by ``scheduler-placement-feed --once``):
there, every instance holds its allocation in Placement exactly once
and the provider's usage counts each instance once. (The killed worker
never got past the locked database, so what a repeat does with an
allocation the dead worker had already written is pinned by
``test_a_repeated_call_writes_its_allocation_once`` in
tests/unit/nova/test_placement.py, not here.)
"""

import time
import uuid

import pytest

from tests.functional import db_state
from tests.functional import placement_service
from tests.functional import server as server_mod
from tests.functional import test_placement_feed as feed_tests
from tests.functional import workload
from tests.functional.test_call_redelivery import \
    kill_a_worker_holding_calls
from tests.functional.test_nova_client import CELL
from tests.functional.test_nova_client import SMALL
from tests.functional.test_nova_client import answers_of
from tests.functional.test_nova_client import nova_python  # noqa: F401
from tests.functional.test_nova_client import start_nova

CALLERS = 4
# the topic nova's client calls ([nova] topic's default), its queue's name
NOVA_TOPIC = 'scheduler'
ANSWERED_WITHIN = 10   # seconds after the kill; nova's monitor waits 30


def _server(tmp_path, exchange, placement):
    options = {'nova': {'enabled': True, 'cell_uuid': CELL,
                        'exchange': exchange,
                        'placement_write_back': placement is not None}}
    if placement is not None:
        options.update(feed_tests._feed_options(placement))
    server = server_mod.SchedulerServer(
        tmp_path, 'sqlite:///%s' % (tmp_path / 'scheduler.sqlite'),
        workers=2, options=options)
    server.db_sync()
    server.start().wait_ready()
    return server


def _cases(ready, go):
    return [
        # printed at once: this driver has nova loaded and is connected
        {'name': 'ready', 'pin': '4.5', 'call': 'pause', 'until': ready},
        {'name': 'wait', 'pin': '4.5', 'call': 'pause', 'until': go},
        {'name': 'boot', 'pin': '4.5', 'flavor': SMALL,
         'return_objects': True, 'return_alternates': True},
    ]


@pytest.mark.parametrize('write_back', [False, True],
                         ids=['no-placement', 'placement-write-back'])
def test_a_dead_workers_nova_calls_are_answered_by_another(
        nova_python, rabbitmq, tmp_path, summary_line,  # noqa: F811
        write_back):
    exchange = 'nova-redelivery-%s' % uuid.uuid4().hex[:12]
    if not write_back:
        server = _server(tmp_path, exchange, None)
        try:
            workload.push_hosts(server, workload.host_reports(4))
            _run(nova_python, server, exchange, tmp_path, summary_line)
        finally:
            server.close()
        return
    with placement_service.running(tmp_path / 'placement') as placement:
        rp = feed_tests._compute(placement, 'nova-rp-0', CALLERS * 2)
        server = _server(tmp_path, exchange, placement)
        try:
            feed_tests._run_once(server)
            placed = _run(nova_python, server, exchange, tmp_path,
                          summary_line, ' with Placement write-back')
        finally:
            server.close()
        for instance in placed:
            held = placement.request('GET', '/allocations/%s' % instance)
            assert {k: v['resources'] for k, v in
                    held['allocations'].items()} == {rp: {
                        'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}
        usages = placement.request(
            'GET', '/resource_providers/%s/usages' % rp)['usages']
        assert usages['VCPU'] == CALLERS, usages


def _run(python, server, exchange, tmp_path, summary_line, how=''):
    """The boots, the kill; the instances placed."""
    ready, go = tmp_path / 'ready', tmp_path / 'go'
    ready.touch()
    drivers = [start_nova(python, exchange, _cases(str(ready), str(go)))
               for _ in range(CALLERS)]
    for driver in drivers:
        assert '"ready"' in driver.stdout.readline()
    killed = kill_a_worker_holding_calls(
        server, tmp_path / 'scheduler.sqlite', go.touch, CALLERS,
        queue=NOVA_TOPIC)
    answers = [answers_of(driver, timeout=60)['boot'] for driver in drivers]
    longest = time.monotonic() - killed
    placed = [a for a in answers if a.get('result')]
    instances = {u for a in placed for u in a['instance_uuids']}
    claimed = {r['consumer_uuid']
               for r in db_state.allocations(server.engine)}
    again = server.lines_with('delivered again')
    summary_line('nova faults%s: worker SIGKILL mid-call: %d boots from '
                 'nova 34\'s client, %d placed, %d delivered again, all '
                 'answered %.1f s after the kill; claims without an '
                 'instance %d' % (how, CALLERS, len(placed), len(again),
                                  longest, len(claimed - instances)))
    assert [a.get('error') for a in answers] == [None] * CALLERS
    assert len(placed) == CALLERS
    assert again, 'no call of the killed worker was delivered again'
    assert longest < ANSWERED_WITHIN
    assert claimed == instances
    return instances


