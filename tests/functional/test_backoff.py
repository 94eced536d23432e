"""The parent's back-off (issue 23.1), on a real ``Supervisor`` (the
parent of ``scheduler-server``) whose only worker dies as soon as it
starts, by a different cause each time (exit 0, exit 3, SIGKILL):

* it is restarted 1, 2, 4 s after each death (cotyledon, the parent
  before this one, restarted it at once, then every ~5 s: 61 deaths in
  100 s), and one error line per death says when;
* a SIGHUP while the parent waits to restart it does not stop the
  restarts: the worker is restarted on time afterwards (cotyledon's
  SIGHUP emptied its list of fork times while its throttle slept:
  ``IndexError: pop from empty list``, and no worker ever again);
* a SIGTERM during a back-off ends the parent at once, status 0.

And how the parent stops its workers: SIGTERM waits for them up to the
graceful timeout and kills the late ones; SIGINT ends everything at once;
workers whose parent is killed stop by themselves.

No broker or database: the parent alone, in a process of its own.
"""

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from scheduler.service import supervisor
from tests import waiting

ROOT = pathlib.Path(__file__).resolve().parents[2]
# slack on each delay (fork, death, SIGCHLD) on a loaded machine
SLACK = 3.0


class _DiesYoung(supervisor.Service):
    """Writes its start time to ``starts``, then dies."""

    def __init__(self, worker_id, starts):
        super().__init__(worker_id)
        self.starts = starts

    def run(self):
        with open(self.starts, 'a') as out:
            out.write('%f\n' % time.monotonic())
        with open(self.starts) as done:
            cause = len(done.read().split()) % 3
        if cause == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(0 if cause == 1 else 3)


def _parent(starts, prepared):
    """The process under test (``python -c``)."""

    def prepare():
        pathlib.Path(prepared).write_text('checked\n')
        return True
    manager = supervisor.Supervisor(prepare, supervisor.Readiness(1),
                                    ready_timeout=5,
                                    graceful_shutdown_timeout=5)
    manager.add_workers(_DiesYoung, 1, (starts,), 0)
    manager.run()


def _starts(path):
    return [float(t) for t in path.read_text().split()] \
        if path.exists() else []


def _children(pid):
    """The pids of ``pid``'s living children (none once reaped)."""
    found = set()
    for task in pathlib.Path('/proc/%d/task' % pid).iterdir():
        found.update((task / 'children').read_text().split())
    return found


def test_a_worker_dying_young_is_restarted_later_and_later(tmp_path):
    starts, prepared = tmp_path / 'starts', tmp_path / 'prepared'
    parent = subprocess.Popen(
        [sys.executable, '-c', 'from tests.functional.test_backoff import '
         '_parent; _parent(%r, %r)' % (str(starts), str(prepared))],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        waiting.wait_for(lambda: len(_starts(starts)) >= 3, 15, 'third start')
        # once the third is gone (a SIGHUP while it runs replaces it at
        # once, as a reload does), the parent waits 4 s to restart it:
        # reload meanwhile
        waiting.wait_for(lambda: not _children(parent.pid), 10, 'third death')
        os.kill(parent.pid, signal.SIGHUP)
        waiting.wait_for(prepared.exists, 5, 'reload check')
        waiting.wait_for(lambda: len(_starts(starts)) >= 4, 15, 'fourth start')
        # once the fourth is gone, the parent waits 8 s: a SIGTERM ends
        # that wait
        waiting.wait_for(lambda: not _children(parent.pid), 10, 'fourth death')
        stopping = time.monotonic()
        os.kill(parent.pid, signal.SIGTERM)
        _, err = parent.communicate(timeout=15)
        stopped_in = time.monotonic() - stopping
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.communicate()
    times = _starts(starts)
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert len(times) == 4, gaps
    for gap, delay in zip(gaps, (1, 2, 4)):
        assert delay <= gap < delay + SLACK, gaps
    assert (parent.returncode, stopped_in < 3) == (0, True), err
    assert 'Traceback' not in err and 'IndexError' not in err
    for delay in (1, 2, 4, 8):
        assert 'restarting it in %d s' % delay in err, err


class _StopsSlowly(supervisor.Service):
    """Serves (writes its pid to ``pids``) until SIGTERM, then takes
    ``linger`` seconds to stop."""

    def __init__(self, worker_id, pids, linger):
        super().__init__(worker_id)
        self.pids, self.linger = pids, linger

    def run(self):
        with open(self.pids, 'a') as out:
            out.write('%d\n' % os.getpid())

    def terminate(self):
        time.sleep(self.linger)     # a worker slow to stop, on purpose


def _slow_parent(pids, linger, timeout):
    manager = supervisor.Supervisor(lambda: False, supervisor.Readiness(2),
                                    ready_timeout=5,
                                    graceful_shutdown_timeout=timeout)
    manager.add_workers(_StopsSlowly, 2, (pids, linger), 0)
    manager.run()


def _start_slow_parent(tmp_path, linger, timeout):
    pids = tmp_path / 'pids'
    parent = subprocess.Popen(
        [sys.executable, '-c', 'from tests.functional.test_backoff import '
         '_slow_parent; _slow_parent(%r, %r, %r)' % (str(pids), linger,
                                                     timeout)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    waiting.wait_for(
        lambda: pids.exists() and len(pids.read_text().split()) == 2, 15,
        'two workers')
    return parent, [int(pid) for pid in pids.read_text().split()]


def _gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize('linger, timeout, stops_in', [
    (60, 2, (1.5, 2 + SLACK)),    # the late ones are killed at 2 s
    (1, 10, (1, 1 + SLACK)),      # each finishes what it does
])
def test_sigterm_waits_for_the_workers_up_to_its_timeout(
        tmp_path, linger, timeout, stops_in):
    parent, pids = _start_slow_parent(tmp_path, linger, timeout)
    stopping = time.monotonic()
    os.kill(parent.pid, signal.SIGTERM)
    _, err = parent.communicate(timeout=20)
    stopped_in = time.monotonic() - stopping
    assert parent.returncode == 0, err
    assert stops_in[0] <= stopped_in < stops_in[1], stopped_in
    assert all(_gone(pid) for pid in pids)
    assert 'Traceback' not in err


def test_sigint_ends_the_parent_and_its_workers_at_once(tmp_path):
    parent, pids = _start_slow_parent(tmp_path, 60, 30)
    os.kill(parent.pid, signal.SIGINT)
    parent.communicate(timeout=10)
    assert parent.returncode == 1
    waiting.wait_for(lambda: all(_gone(pid) for pid in pids), 5,
                     'workers gone')


def test_workers_stop_when_the_parent_is_killed(tmp_path):
    parent, pids = _start_slow_parent(tmp_path, 0, 30)
    parent.kill()
    parent.communicate(timeout=10)
    waiting.wait_for(lambda: all(_gone(pid) for pid in pids), 10,
                     'workers gone')
