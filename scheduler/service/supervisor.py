"""The parent process: it forks the workers and keeps them running.

``Supervisor`` runs each worker (a ``Service``) in a process forked from
it, on the standard library alone (``multiprocessing``'s fork context,
``signal``, ``os``):

* **restarts with back-off**: a worker that dies less than
  ``HEALTHY_AFTER`` seconds after its start, whatever the cause or exit
  status, unless the parent stopped it, is restarted after a delay that
  doubles each time (1, 2, 4 ... ``MAX_BACKOFF`` s), per worker; one that
  lived longer is restarted at once (``Backoff``). The parent waits in its
  main loop, which a signal wakes; nothing is forked once it stops.
* **SIGTERM**: every worker gets SIGTERM (its ``terminate()``: in-flight
  requests finish); the parent waits up to ``graceful_shutdown_timeout``
  seconds for them, kills those still running, and ``run()`` returns.
  SIGINT ends the workers and the parent at once (exit status 1).
* **rolling reload**: SIGHUP only wakes the reload thread, which calls
  ``prepare()`` (``scheduler.service.reload.prepare``: check, then apply
  the new files) and, if it returns True, replaces the workers one at a
  time: a worker is stopped as by SIGTERM (in-flight requests finish),
  forked again with the new configuration, and the next one waits until
  it serves (``Readiness``), so the others serve meanwhile. A reload whose
  new worker does not serve in time stops there, with one error line; the
  workers not yet replaced keep serving. A SIGHUP during a reload runs
  another one after it. Workers ignore SIGHUP themselves.
* **readiness**: each worker writes its pid into its slot of a shared
  array (``Readiness.serving``) once it serves; slots are numbered like
  the workers' indexes (decision workers first, then report workers).
* **a worker whose parent dies** stops as on SIGTERM: it watches the
  read end of a pipe whose only write end the parent holds.

In a worker, ``Service.run()`` runs in a thread of its own (it may start
its work and return, or block); SIGTERM calls ``terminate()`` in the main
thread, then the process exits 0, or 1 if ``terminate()`` raised or did
not return within ``graceful_shutdown_timeout`` seconds. An exception
from ``run()`` ends the worker with status 2 (and the back-off applies).
"""

import collections
import multiprocessing
import os
import signal
import threading
import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# a worker dying sooner than this after its start is restarted with back-off
HEALTHY_AFTER = 30.0
MAX_BACKOFF = 60


class Backoff:
    """When to restart each worker (module docstring), keyed by any
    hashable name of a worker."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._started = {}
        self._failures = collections.Counter()
        self._delays = {}

    def started(self, key):
        self._started[key] = self._clock()

    def died(self, key, stopped_by_parent=False):
        """Returns (seconds to wait before its restart, seconds it lived);
        ``pop_delay(key)`` returns the first one again, once."""
        now = self._clock()
        lived = now - self._started.pop(key, now)
        if stopped_by_parent or lived >= HEALTHY_AFTER:
            self._failures[key] = 0
            delay = 0
        else:
            self._failures[key] += 1
            delay = min(MAX_BACKOFF, 2 ** (self._failures[key] - 1))
        self._delays[key] = delay
        return delay, lived

    def pop_delay(self, key):
        return self._delays.pop(key, 0)


class Readiness:
    """Which worker slots serve: shared memory, written by the workers."""

    def __init__(self, slots):
        self._pids = multiprocessing.RawArray('i', slots)

    def serving(self, index):
        """In a worker: it serves now."""
        self._pids[index] = os.getpid()

    def clear(self, index):
        self._pids[index] = 0

    def wait(self, index, timeout, stop):
        """True once slot ``index`` serves; False after ``timeout``
        seconds or once ``stop`` (an Event) is set."""
        deadline = time.monotonic() + timeout
        while not self._pids[index]:
            if stop.wait(0.1) or time.monotonic() > deadline:
                return False
        return True


class Service:
    """A worker's work, built in the worker process:
    ``factory(worker_id, *args)``. ``run()`` starts it; ``terminate()``
    stops it on SIGTERM (module docstring)."""

    name = 'worker'

    def __init__(self, worker_id):
        self.worker_id = worker_id

    def run(self):
        """Start the work; may return once it runs, or block."""

    def terminate(self):
        """Stop the work; the process exits when this returns."""


_Group = collections.namedtuple('_Group', 'factory count args first_index')


class Supervisor:
    """The workers' parent (module docstring). ``prepare()`` says whether
    a SIGHUP replaces the workers; a new worker has ``ready_timeout``
    seconds to serve."""

    # longest sleep of the main loop: a restart due, or a signal, wakes it
    TICK = 0.5

    def __init__(self, prepare, readiness, ready_timeout,
                 graceful_shutdown_timeout):
        self._prepare = prepare
        self.readiness = readiness
        self.backoff = Backoff()
        self._ready_timeout = ready_timeout
        self._graceful_shutdown_timeout = graceful_shutdown_timeout
        self._groups = []
        # (group, worker_id) -> its living process; -> when to restart it
        self._processes = {}
        self._restart_at = {}
        self._lock = threading.Lock()
        self._stopped_by_parent = set()
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._reload_wanted = threading.Event()
        self._forks = multiprocessing.get_context('fork')
        self._parent_alive = None

    def add_workers(self, factory, count, args, first_index):
        """``count`` workers built by ``factory(worker_id, *args)``; the
        first one's slot is ``first_index``."""
        self._groups.append(_Group(factory, count, tuple(args),
                                   first_index))
        return len(self._groups) - 1

    def run(self):
        """Fork the workers and supervise them until SIGTERM (main thread
        only: it takes the process's signals)."""
        self._parent_alive = os.pipe()
        for signum, handler in ((signal.SIGTERM, self._on_sigterm),
                                (signal.SIGINT, self._on_sigint),
                                (signal.SIGHUP, self._on_sighup),
                                (signal.SIGCHLD, self._on_sigchld)):
            signal.signal(signum, handler)
        threading.Thread(target=self._reload_loop, name='reload',
                         daemon=True).start()
        now = time.monotonic()
        for group, config in enumerate(self._groups):
            for worker_id in range(config.count):
                self._restart_at[(group, worker_id)] = now
        while not self._stopping.is_set():
            self._reap()
            self._start_due()
            self._wake.wait(self._sleep())
            self._wake.clear()
        self._shutdown()

    # -- signals (main thread) -------------------------------------------

    def _on_sigterm(self, signum, frame):
        LOG.info('SIGTERM: stopping the workers')
        self._stopping.set()
        self._wake.set()
        self._reload_wanted.set()

    def _on_sigint(self, signum, frame):
        for process in self._living():
            _signal(process.pid, signal.SIGINT)
        os._exit(1)

    def _on_sighup(self, signum, frame):
        self._reload_wanted.set()

    def _on_sigchld(self, signum, frame):
        self._wake.set()

    # -- the main loop ---------------------------------------------------

    def _living(self):
        with self._lock:
            return list(self._processes.values())

    def _sleep(self):
        if not self._restart_at:
            return self.TICK
        due = min(self._restart_at.values()) - time.monotonic()
        return min(self.TICK, max(0.0, due))

    def _reap(self):
        with self._lock:
            dead = [(key, process) for key, process in self._processes.items()
                    if not process.is_alive()]
            for key, _ in dead:
                del self._processes[key]
        for key, process in dead:
            self._on_dead_worker(key, process)

    def _start_due(self):
        now = time.monotonic()
        for key, when in sorted(self._restart_at.items(),
                                key=lambda item: item[1]):
            if when > now or self._stopping.is_set():
                continue
            del self._restart_at[key]
            self._start_worker(key)

    def _start_worker(self, key):
        group, worker_id = key
        config = self._groups[group]
        process = self._forks.Process(
            target=_worker_main, name='worker-%d' % self._index(key),
            args=(config.factory, worker_id, config.args,
                  self._parent_alive, self._graceful_shutdown_timeout))
        process.start()
        with self._lock:
            self._processes[key] = process
        self.backoff.started(key)

    def _index(self, key):
        group, worker_id = key
        return self._groups[group].first_index + worker_id

    def _on_dead_worker(self, key, process):
        pid, exit_code = process.pid, process.exitcode
        by_parent = pid in self._stopped_by_parent
        self._stopped_by_parent.discard(pid)
        delay, lived = self.backoff.died(key, by_parent)
        self._restart_at[key] = time.monotonic() + delay
        index = self._index(key)
        cause = ('signal %d' % -exit_code if exit_code < 0
                 else 'exit code %d' % exit_code)
        if by_parent:
            LOG.info('Worker %d (pid %s) stopped; starting its replacement',
                     index, pid)
        elif delay:
            LOG.error('Worker %d died %.1f s after its start (%s);'
                      ' restarting it in %d s', index, lived, cause, delay)
        else:
            LOG.error('Worker %d died (%s); restarting it', index, cause)

    def _shutdown(self):
        processes = self._living()
        for process in processes:
            _signal(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self._graceful_shutdown_timeout
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.exitcode is None:
                LOG.warning('Worker (pid %d) still running %d s after '
                            'SIGTERM: killed', process.pid,
                            self._graceful_shutdown_timeout)
                process.kill()
                process.join()
        LOG.info('Every worker stopped')

    # -- SIGHUP (reload thread) -----------------------------------------

    def _reload_loop(self):
        while True:
            self._reload_wanted.wait()
            self._reload_wanted.clear()
            if self._stopping.is_set():
                return
            LOG.info('SIGHUP: checking the configuration files')
            try:
                if self._prepare():
                    self._replace_all()
            except Exception:  # the workers serve on, whatever happened
                LOG.exception('Reload failed; the workers keep serving')

    def _replace_all(self):
        for group, config in enumerate(self._groups):
            for worker_id in range(config.count):
                if not self._replace((group, worker_id)):
                    return
        LOG.info('Reload done: every worker serves the new configuration')

    def _replace(self, key):
        """Stop one worker and wait until its replacement serves."""
        index = self._index(key)
        with self._lock:
            process = self._processes.get(key)
            if process is None:  # being restarted: with the new files
                return True
            pid = process.pid
            self._stopped_by_parent.add(pid)
        self.readiness.clear(index)
        LOG.info('Reload: replacing worker %d (pid %d)', index, pid)
        _signal(pid, signal.SIGTERM)
        if self.readiness.wait(index, self._ready_timeout, self._stopping):
            return True
        if not self._stopping.is_set():
            LOG.error('Reload stopped: worker %d does not serve %d s after '
                      'its restart; the workers not yet replaced keep the '
                      'previous configuration', index, self._ready_timeout)
        return False


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass   # gone already


def _worker_main(factory, worker_id, args, parent_alive, timeout):
    """A worker process's life (module docstring)."""
    read_end, write_end = parent_alive
    os.close(write_end)
    stop = threading.Event()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)     # the parent reloads
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, lambda *_: os._exit(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=_watch_parent, args=(read_end, stop),
                     name='parent-watch', daemon=True).start()
    try:
        service = factory(worker_id, *args)
    except BaseException:
        LOG.exception('Worker %d could not be built', worker_id)
        os._exit(2)
    threading.Thread(target=_run, args=(service,), name='run',
                     daemon=True).start()
    while not stop.wait(Supervisor.TICK):
        pass
    if timeout > 0:
        signal.signal(signal.SIGALRM, lambda *_: os._exit(1))
        signal.alarm(timeout)
    try:
        service.terminate()
    except BaseException:
        LOG.exception('Worker %d failed to stop cleanly', worker_id)
        os._exit(1)
    os._exit(0)


def _watch_parent(read_end, stop):
    os.read(read_end, 1)     # returns once the parent is gone
    LOG.info('Parent process gone: worker (pid %d) stopping', os.getpid())
    stop.set()


def _run(service):
    try:
        service.run()
    except SystemExit as exc:
        os._exit(exc.code if isinstance(exc.code, int) else 1)
    except BaseException:
        LOG.exception('Worker %s failed', service.worker_id)
        os._exit(2)
