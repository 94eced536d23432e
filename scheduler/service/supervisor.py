"""The parent process: it forks the workers and keeps them running.

``Supervisor`` is cotyledon's ``ServiceManager`` (the process manager of
oslo.service's threading backend) with three changes:

* **back-off in the parent**: a worker that dies less than
  ``HEALTHY_AFTER`` seconds after its start, whatever the cause or exit
  status, unless the parent stopped it, is restarted after a delay that
  doubles each time (1, 2, 4 ... ``MAX_BACKOFF`` s), per worker; one that
  lived longer is restarted at once. The parent measures both (``Backoff``)
  and waits in its supervisor thread, which a SIGTERM wakes (and then
  starts no worker). cotyledon's
  own respawn throttle is off: it slept 5 s, whatever the cause, and a
  SIGHUP emptying its list of fork times while it slept killed the
  supervisor thread (``IndexError: pop from empty list``), leaving a
  parent without workers.
* **rolling reload**: SIGHUP only wakes the reload thread, which calls
  ``prepare()`` (``scheduler.service.reload.prepare``: check, then apply
  the new files) and, if it returns True, replaces the workers one at a
  time: a worker is stopped as by SIGTERM (in-flight requests finish),
  forked again with the new configuration, and the next one waits until
  it serves (``Readiness``), so the others serve meanwhile. A reload whose
  new worker does not serve in time stops there, with one error line; the
  workers not yet replaced keep serving. A SIGHUP during a reload runs
  another one after it.
* **readiness**: each worker writes its pid into its slot of a shared
  array (``Readiness.serving``) once it serves; slots are numbered like
  the workers' indexes (decision workers first, then report workers).
"""

import collections
import multiprocessing
import os
import threading
import time

import cotyledon
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


class Supervisor(cotyledon.ServiceManager):
    """The workers' parent (module docstring). ``prepare()`` says whether
    a SIGHUP replaces the workers; a new worker has ``ready_timeout``
    seconds to serve."""

    def __init__(self, prepare, readiness, ready_timeout,
                 graceful_shutdown_timeout):
        super().__init__(graceful_shutdown_timeout=graceful_shutdown_timeout)
        self._prepare = prepare
        self.readiness = readiness
        self.backoff = Backoff()
        self._ready_timeout = ready_timeout
        self._first_index = {}
        self._stopped_by_parent = set()
        self._reload_wanted = threading.Event()
        self.register_hooks(on_dead_worker=self._on_dead_worker)

    def add_workers(self, service, count, args, first_index):
        """``count`` workers of ``service``; the first one's slot is
        ``first_index``."""
        service_id = self.add(service, workers=count, args=args)
        self._first_index[service_id] = first_index
        return service_id

    def run(self):
        threading.Thread(target=self._reload_loop, name='reload',
                         daemon=True).start()
        super().run()

    # -- cotyledon's hooks and overrides (supervisor thread) -------------

    def _slowdown_respawn_if_needed(self):
        time.sleep(self._wait_interval)   # the back-off replaces it

    def _start_worker(self, service_id, worker_id):
        key = (service_id, worker_id)
        delay = self.backoff.pop_delay(key)
        if delay:
            self._dead.wait(delay)
        if self._dead.is_set():
            # stopping: cotyledon's _adjust_workers would fork one more
            return
        super()._start_worker(service_id, worker_id)
        self.backoff.started(key)

    def _on_dead_worker(self, service_id, worker_id, exit_code):
        process = self._process(service_id, worker_id, alive=False)
        pid = process.pid if process is not None else None
        by_parent = pid in self._stopped_by_parent
        self._stopped_by_parent.discard(pid)
        delay, lived = self.backoff.died((service_id, worker_id), by_parent)
        index = self._first_index[service_id] + worker_id
        if by_parent:
            LOG.info('Worker %d (pid %s) stopped; starting its replacement',
                     index, pid)
        elif delay:
            LOG.error('Worker %d died %.1f s after its start (exit code %s);'
                      ' restarting it in %d s', index, lived, exit_code,
                      delay)
        else:
            LOG.error('Worker %d died (exit code %s); restarting it',
                      index, exit_code)

    def _process(self, service_id, worker_id, alive=True):
        for process, info in list(self._running_services[service_id].items()):
            if info.worker_id == worker_id and process.is_alive() == alive:
                return process
        return None

    # -- SIGHUP ------------------------------------------------------------

    def _reload(self):
        # the main thread's signal loop: never block it
        self._reload_wanted.set()

    def _reload_loop(self):
        while True:
            self._reload_wanted.wait()
            self._reload_wanted.clear()
            if self._dead.is_set():
                return
            LOG.info('SIGHUP: checking the configuration files')
            try:
                if self._prepare():
                    self._replace_all()
            except Exception:  # the workers serve on, whatever happened
                LOG.exception('Reload failed; the workers keep serving')

    def _replace_all(self):
        for service_id, config in list(self._services.items()):
            for worker_id in range(config.workers):
                if not self._replace(service_id, worker_id):
                    return
        LOG.info('Reload done: every worker serves the new configuration')

    def _replace(self, service_id, worker_id):
        """Stop one worker and wait until its replacement serves."""
        index = self._first_index[service_id] + worker_id
        process = self._process(service_id, worker_id)
        if process is None:  # being restarted: with the new configuration
            return True
        self.readiness.clear(index)
        self._stopped_by_parent.add(process.pid)
        LOG.info('Reload: replacing worker %d (pid %d)', index, process.pid)
        process.terminate()
        if self.readiness.wait(index, self._ready_timeout, self._dead):
            return True
        if not self._dead.is_set():
            LOG.error('Reload stopped: worker %d does not serve %d s after '
                      'its restart; the workers not yet replaced keep the '
                      'previous configuration', index, self._ready_timeout)
        return False
