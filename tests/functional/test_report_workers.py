"""``[DEFAULT] report_workers``: tracker reports have processes of their own.

With report workers, the decision workers serve only the scheduler topic
and the report workers only the report topic (real RabbitMQ and
PostgreSQL). The proof is a stopped report worker: while it is stopped,
placements go on and no report is stored; once it runs again, the reports
it was holding are stored.
"""

import os
import re
import signal
import time

import pytest

from tests.functional import db_state
from tests.functional import tracker
from tests.functional import workload

REPORT_WORKER = re.compile(r'Report worker (\d+) \(pid (\d+)\) serving topic')
TINY = workload.FLAVORS[0]
# longer than any report takes to be stored on an idle machine
QUIET = 3.0


def _place(server, count):
    client = server.client()
    ctxt = workload.context()
    return [client.select_destinations(
        ctxt, workload.object_spec(TINY))[0][0].host for _ in range(count)]


@pytest.mark.parametrize('backend', ['postgresql'])
def test_reports_wait_for_the_report_worker_and_decisions_do_not(scheduler):
    server = scheduler(workers=2, options={'DEFAULT': {'report_workers': 1}})
    [(index, pid)] = [(int(m.group(1)), int(m.group(2)))
                      for m in REPORT_WORKER.finditer(server.log_text())]
    # its index follows the decision workers' (heartbeat, metrics port)
    assert index == 2
    workload.push_hosts(server, workload.host_reports(6, prefix='rw'))
    assert len(_place(server, 4)) == 4

    os.kill(pid, signal.SIGSTOP)
    try:
        tracker.push_stats(server, workload.host_reports(2, prefix='late'))
        time.sleep(QUIET)
        # no decision worker took the reports ...
        assert db_state.provider_count(server.engine) == 6
        # ... and decisions do not need the report worker
        placed = _place(server, 4)
        assert len(placed) == 4 and not any(h.startswith('late')
                                            for h in placed)
    finally:
        os.kill(pid, signal.SIGCONT)
    db_state.wait_for(lambda: db_state.provider_count(server.engine) == 8,
                      30, 'the report worker to store the held reports')
