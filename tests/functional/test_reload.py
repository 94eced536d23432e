"""SIGHUP is safe (issue 23.1, 23.2), on a real scheduler-server under a
light load (two conductors):

* a configuration that start-up would refuse (an unknown filter) changes
  nothing: one line says why, the same workers keep answering;
* a good one is applied (``debug = true``) by replacing the workers one
  at a time: every call made meanwhile is answered with a placement, in
  far less than the call monitor's 30 s; a second SIGHUP right after
  (which used to kill the parent's supervisor thread) works as well.

The figures (calls, answers, longest wait) go to the terminal summary.
"""

import os
import re
import signal
import time

import pytest

from tests.functional import db_state
from tests.functional import fault_load
from tests.functional import workload
from tests.functional.test_stop import PROMPT
from tests.functional.test_stop import figures
from tests.functional.test_stop import timed

pytestmark = pytest.mark.parametrize('backend', ['sqlite'])


def _edit(server, old, new):
    text = server.config_path.read_text()
    server.config_path.write_text(text.replace(old, new, 1) if old
                                  else text + new)


def _sighup_and_wait(server, line, count):
    os.kill(server.process.pid, signal.SIGHUP)
    db_state.wait_for(lambda: server.count_in_log(line) >= count, 60,
                      '%r in the log' % line)


def _loaded(scheduler):
    server = scheduler(workers=2)
    workload.push_hosts(server, workload.host_reports(fault_load.HOSTS))
    return server, timed(fault_load.Load(server, threads=2))


def _not_placed(load):
    return [kind for _, kind, _, _ in load.answers if kind != 'placed']


def test_a_sighup_with_an_unknown_filter_keeps_serving(scheduler,
                                                      summary_line):
    server, load = _loaded(scheduler)
    workers = server.worker_pids()
    with load:
        workload.wait_placing(load)
        mark = time.monotonic()
        _edit(server, None, '[filter_scheduler]\nenabled_filters = '
              'ComputeFilter,RamFilter\n')
        _sighup_and_wait(server, 'Not reloading', 1)
        # still placing 3 s after the refused reload
        workload.wait_placing(load, since=mark + 3)
    summary_line('reload: SIGHUP with an unknown filter: %s'
                 % figures(load, mark))
    [line] = [line for line in server.log_text().splitlines()
              if 'Not reloading' in line]
    assert 'RamFilter' in line
    assert server.worker_pids() == workers
    assert _not_placed(load) == []
    assert load.first_success_after(mark + 3) is not None
    assert server.errors_in_log(ignore=['Not reloading']) == []


def test_a_good_sighup_drops_no_call_and_applies_debug(scheduler,
                                                       summary_line):
    server, load = _loaded(scheduler)
    workers = server.worker_pids()
    with load:
        workload.wait_placing(load)
        mark = time.monotonic()
        _edit(server, '[DEFAULT]\n', '[DEFAULT]\ndebug = true\n')
        _sighup_and_wait(server, 'Reload done', 1)
        replaced = server.worker_pids()
        # a second SIGHUP used to kill the parent's supervisor thread
        _sighup_and_wait(server, 'Reload done', 2)
        workload.wait_placing(load, since=time.monotonic())
    summary_line('reload: two good SIGHUPs (debug = true), one worker at '
                 'a time: %s' % figures(load, mark))
    assert _not_placed(load) == []
    assert max(wait for _, wait in load.call_waits) < PROMPT
    assert not set(replaced) & set(workers)
    assert len(server.worker_pids()) == 2
    assert _one_at_a_time(server.log_text().split('Reload done', 1)[0])
    after = server.log_text().split('Reload done', 1)[1]
    assert ' DEBUG ' in after
    assert server.errors_in_log() == []
    server.assert_alive()


def _one_at_a_time(log):
    """The first reload's log: worker 0's replacement served (its
    'serving topic' line) before worker 1 was stopped, so one worker
    always served."""
    reload_ = log.split('replacing the workers one at a time', 1)[1]
    events = re.findall(r'Reload: replacing worker (\d)|'
                        r'Worker (\d) \(pid \d+\) serving topic', reload_)
    order = [('stop', a) if a else ('serving', b) for a, b in events]
    return order[:3] == [('stop', '0'), ('serving', '0'), ('stop', '1')]

