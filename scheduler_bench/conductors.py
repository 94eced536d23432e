"""Conductors: closed-loop load generators on ``SchedulerClient``.

``run(load, processes)`` starts ``processes`` conductor processes (or uses
this one when ``processes`` is 1) with ``load.threads`` threads each. Every
thread first sends one request that cannot fit anywhere (it creates the
RPC connection and reply queue and claims nothing), then all threads start
together and call ``select_destinations`` back to back until
``load.duration`` seconds have passed or ``load.max_requests`` were sent.

Each request is a sample ``(start, seconds, requested, placed, status)``
with ``status`` ``ok``, ``novalidhost`` or an error class name. Each
process also reports the CPU time it used, so a run can tell whether the
conductors' own interpreter (one GIL per process) was the bottleneck.
"""

import dataclasses
import itertools
import multiprocessing
import queue as queue_module
import threading
import time

from scheduler import exception
from scheduler_bench import settings
from scheduler_bench import workload
from scheduler.client import SchedulerClient
from scheduler.context import RequestContext

_IMPOSSIBLE = {'instance_type': {'vcpus': 1, 'memory_mb': 2 ** 30,
                                 'root_gb': 1, 'name': 'bench.warmup'},
               'num_instances': 1}
_START_DELAY = 0.3


@dataclasses.dataclass
class Load:
    """What conductors send: ``requests`` (flavor, count, zone) in turn."""

    client: dict
    requests: list
    threads: int = 8
    duration: float = 10.0
    max_requests: int = 0
    return_alternates: bool = False


@dataclasses.dataclass
class Results:
    samples: list
    cpu_seconds: list
    wall_seconds: float
    processes: int
    threads: int

    def ok(self):
        return [s for s in self.samples if s[4] == 'ok']

    def placed(self):
        return sum(s[3] for s in self.samples)

    def errors(self):
        return [s for s in self.samples if s[4] not in ('ok', 'novalidhost')]

    def span(self):
        """Seconds from the first request's start to the last's end."""
        if not self.samples:
            return 0.0
        return (max(s[0] + s[1] for s in self.samples)
                - min(s[0] for s in self.samples))

    def client_cpu_share(self):
        """Busiest conductor process's CPU time / wall time (1.0: one
        core fully used, i.e. bound by its GIL)."""
        if not self.wall_seconds or not self.cpu_seconds:
            return 0.0
        return max(self.cpu_seconds) / self.wall_seconds


class _Conductor:
    """The threads of one conductor process."""

    def __init__(self, load, index, processes):
        self.load = load
        settings.quiet_client_logs()
        self.client = SchedulerClient(settings.make_conf(load.client))
        self.ctxt = RequestContext(project_id='bench', user_id='bench',
                                   roles=['service'])
        self.specs = workload.SpecPool()
        total = load.threads * processes
        self.first_thread = index * load.threads
        self.per_thread = (-(-load.max_requests // total)
                           if load.max_requests else 0)
        self.total_threads = total
        self.samples = []
        self.lock = threading.Lock()

    def warm_up(self):
        threads = [threading.Thread(target=self._impossible)
                   for _ in range(self.load.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def _impossible(self):
        try:
            self.client.select_destinations(self.ctxt, _IMPOSSIBLE)
        except exception.NoValidHost:
            pass

    def run(self, start_at):
        time.sleep(max(0.0, start_at - time.time()))
        cpu = time.process_time()
        wall = time.monotonic()
        threads = [threading.Thread(target=self._loop,
                                    args=(self.first_thread + t, start_at))
                   for t in range(self.load.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.client.close()
        return (self.samples, time.process_time() - cpu,
                time.monotonic() - wall)

    def _loop(self, thread_id, start_at):
        deadline = start_at + self.load.duration
        requests = self.load.requests
        mine = itertools.islice(
            itertools.cycle(range(thread_id, len(requests),
                                  self.total_threads)),
            self.per_thread or None)
        samples = []
        for index in mine:
            if time.time() >= deadline:
                break
            samples.append(self._one(*requests[index]))
        with self.lock:
            self.samples.extend(samples)

    def _one(self, flavor, count, zone):
        spec = self.specs.get(flavor, count, zone)
        started = time.time()
        t0 = time.perf_counter()
        try:
            dests = self.client.select_destinations(
                self.ctxt, spec, return_alternates=self.load.return_alternates)
            status, placed = 'ok', len(dests)
        except exception.NoValidHost:
            status, placed = 'novalidhost', 0
        except Exception as exc:  # a failed call is a result, not a crash
            status, placed = type(exc).__name__, 0
        return (started, time.perf_counter() - t0, count, placed, status)


def _process_main(load, index, processes, ready, go, start_at, results):
    conductor = _Conductor(load, index, processes)
    conductor.warm_up()
    ready.put(index)
    go.wait()
    results.put(conductor.run(start_at.value))


def run(load, processes=1):
    """Run ``load`` from ``processes`` conductor processes; ``Results``."""
    if processes == 1:
        conductor = _Conductor(load, 0, 1)
        conductor.warm_up()
        outcome = [conductor.run(time.time() + _START_DELAY)]
    else:
        group = ProcessGroup(_process_main, [(load, i, processes)
                                             for i in range(processes)])
        with group:
            group.wait_ready()
            group.go()
            outcome = group.results(load.duration + 180)
    samples = [s for o in outcome for s in o[0]]
    return Results(samples=samples, cpu_seconds=[o[1] for o in outcome],
                   wall_seconds=max(o[2] for o in outcome),
                   processes=processes, threads=load.threads)


class ProcessGroup:
    """Load-generator processes that get ready, then start together.

    ``target(*args, ready, go, start_at, results)`` runs in a fresh
    (spawned) interpreter: it sets up, puts anything on ``ready``, waits
    for ``go``, starts at ``start_at.value`` (a wall-clock time) and puts
    its outcome on ``results``.
    """

    def __init__(self, target, arg_list):
        ctx = multiprocessing.get_context('spawn')
        self.ready, self._results = ctx.Queue(), ctx.Queue()
        self._go, self.start_at = ctx.Event(), ctx.Value('d', 0.0)
        self.children = [
            ctx.Process(target=target, daemon=True,
                        args=tuple(args) + (self.ready, self._go,
                                            self.start_at, self._results))
            for args in arg_list]
        for child in self.children:
            child.start()

    def wait_ready(self, timeout=120):
        try:
            for _ in self.children:
                self.ready.get(timeout=timeout)
        except queue_module.Empty:
            raise RuntimeError('a load-generator process did not get '
                               'ready in %ds' % timeout)

    def go(self, delay=_START_DELAY):
        self.start_at.value = time.time() + delay
        self._go.set()
        return self.start_at.value

    def results(self, timeout):
        try:
            return [self._results.get(timeout=timeout)
                    for _ in self.children]
        except queue_module.Empty:
            raise RuntimeError('a load-generator process did not report '
                               'in %ds' % timeout)

    def close(self):
        for child in self.children:
            child.join(timeout=10)
            if child.is_alive():
                child.terminate()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
