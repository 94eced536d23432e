"""Scenario ``churn``: trackers pushing stats while conductors schedule.

A 10k-host cluster (30% used) and a 2-worker ``scheduler-server``. First
4 conductors schedule alone (baseline latency); then the same conductors
schedule while 10k trackers, 4 threads in each of 2 processes, cast
``update_resource_stats`` at a fixed total rate (each tracker once every
``hosts / rate`` seconds, every report a real change: its usage moves by
an instance built or deleted, ``workload.tracker_stats``).

Report number N of a tracker carries ``stats.bench_beat = N``, so the sum
over hosts of the stored ``bench_beat`` counts the reports the scheduler
has absorbed: applied, or superseded by a newer report of the same host
(workers keep only the newest pending report per host and write them in
batches, so the change counter no longer moves once per report). Sampled
every half second, this gives the rate absorbed while the trackers send,
and how long the workers need to drain the backlog afterwards.
"""

import json
import threading
import time

import sqlalchemy as sa

from scheduler_bench import conductors
from scheduler_bench import report
from scheduler_bench import settings
from scheduler_bench import stats
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment
from scheduler.client import SchedulerClient
from scheduler.context import RequestContext
from scheduler.db import models

NAME = 'churn'
HOSTS = 10000
RATE = 2000
TRACKER_PROCESSES = 2
TRACKER_THREADS = 4
CONDUCTORS = 4
USED = 0.3
DRAIN_LIMIT, QUICK_DRAIN_LIMIT = 30.0, 5.0

TARGETS = (
    report.Target('stats updates/s absorbed while scheduling',
                  ('absorbed_per_s',), '>=', 2000, '/s'),
    report.Target('placement p99 while absorbing / p99 alone',
                  ('p99_ratio',), '<=', 3, 'x'),
    report.Target('overcommitted inventories', ('overcommitted',), '==', 0),
)


def _stats(index, beat):
    """A tracker's report whose usage moves (``workload.tracker_stats``)."""
    return workload.tracker_stats(index, beat, USED)


def _tracker_main(client_values, hosts, process, rate, duration,
                  ready, go, start_at, results):
    """Cast reports at ``rate``/s from TRACKER_THREADS threads; thread t
    of process p reports the hosts i with i % n == p * threads + t."""
    settings.quiet_client_logs()
    client = SchedulerClient(settings.make_conf(client_values))
    ctxt = RequestContext(project_id='bench', user_id='bench',
                          roles=['service'])
    total = TRACKER_PROCESSES * TRACKER_THREADS
    outcome = []
    threads = [threading.Thread(target=_tracker_thread, args=(
        client, ctxt, list(range(process * TRACKER_THREADS + t, hosts,
                                 total)),
        rate / TRACKER_THREADS, duration, start_at, outcome))
        for t in range(TRACKER_THREADS)]
    ready.put(process)
    go.wait()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    results.put({'sent': sum(o[0] for o in outcome),
                 'seconds': max(o[1] for o in outcome),
                 'max_behind_s': round(max(o[2] for o in outcome), 3)})


def _tracker_thread(client, ctxt, mine, rate, duration, start_at, outcome):
    time.sleep(max(0.0, start_at.value - time.time()))
    started = time.monotonic()
    sent, behind = 0, 0.0
    while True:
        due = started + sent / rate
        now = time.monotonic()
        if now - started >= duration or due - started >= duration:
            break
        if due > now:
            time.sleep(due - now)
        else:
            behind = max(behind, now - due)
        index = mine[sent % len(mine)]
        client.update_resource_stats(
            ctxt, workload.host_name(index),
            _stats(index, 1 + sent // len(mine)))
        sent += 1
    outcome.append((sent, time.monotonic() - started, behind))


def _absorbed(db, floor=0):
    """Reports absorbed so far: the sum of the hosts' stored beats, each
    counted above ``floor`` (the last beat of an earlier run)."""
    total = 0
    with db.engine.connect() as conn:
        for (attributes,) in conn.execute(
                sa.select(models.providers.c.attributes)):
            beat = (json.loads(attributes or '{}').get('stats') or {}).get(
                'bench_beat')
            total += max(0, int(beat) - floor) if beat else 0
    return total


class _AbsorbedWatch:
    """Samples ``_absorbed`` every ``interval`` seconds."""

    def __init__(self, db, interval=0.5):
        self.db = db
        self.interval = interval
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.samples.append((time.time(), _absorbed(self.db)))
            self._stop.wait(self.interval)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()
        self.samples.append((time.time(), _absorbed(self.db)))

    def value_at(self, when):
        """Absorbed count at the last sample at or before ``when``."""
        before = [v for t, v in self.samples if t <= when]
        return before[-1] if before else self.samples[0][1]


def _schedule(options, dep, server, seed):
    mix = workload.RequestMix(seed)
    requests = [(f, 1, z) for f, z in (mix.next() for _ in range(20000))]
    return conductors.run(conductors.Load(
        client=dep.client(server), requests=requests, threads=CONDUCTORS,
        duration=options.pick(10.0, 3.0), max_requests=options.requests or 0))


def _churn(options, dep, server):
    rate = RATE
    duration = options.pick(10.0, 3.0)
    args = [(dep.client(server), dep.hosts, i, rate / TRACKER_PROCESSES,
             duration) for i in range(TRACKER_PROCESSES)]
    watch = _AbsorbedWatch(dep.db)
    with conductors.ProcessGroup(_tracker_main, args) as trackers:
        trackers.wait_ready()
        before = _absorbed(dep.db)
        watch.start()
        start_at = trackers.go()
        scheduled = _schedule(options, dep, server, options.seed + 1)
        sent = trackers.results(duration + 120)
    end_at = start_at + duration
    expected = before + sum(s['sent'] for s in sent)
    drained_at = _wait_drained(dep.db, expected,
                               options.pick(DRAIN_LIMIT, QUICK_DRAIN_LIMIT))
    watch.stop()
    absorbed_window = watch.value_at(end_at) - before
    total = _absorbed(dep.db) - before
    return {
        'offered_per_s': rate, 'seconds': duration,
        'sent': sum(s['sent'] for s in sent),
        'sent_per_s': round(sum(s['sent'] / s['seconds'] for s in sent), 1),
        'sender_max_behind_s': max(s['max_behind_s'] for s in sent),
        'absorbed_in_window': absorbed_window,
        'absorbed_per_s': round(absorbed_window / duration, 1),
        'absorbed_total': total,
        'drained_after_s': (round(drained_at - end_at, 1)
                            if drained_at else None),
        'drain_limit_s': options.pick(DRAIN_LIMIT, QUICK_DRAIN_LIMIT),
        'scheduling': _summary(scheduled),
    }


def _wait_drained(db, expected, limit):
    """Wall time at which ``expected`` reports were absorbed (or None)."""
    deadline = time.time() + limit
    while time.time() < deadline:
        if _absorbed(db) >= expected:
            return time.time()
        time.sleep(0.2)
    return None


def _summary(results):
    ok = results.ok()
    return {'placements': results.placed(),
            'placements_per_s': round(stats.rate(results.placed(),
                                                 results.span()), 1),
            'latency': stats.summarize([s[1] for s in ok]),
            'errors': len(results.errors())}


def run(options):
    hosts = options.size(HOSTS, HOSTS)
    result = {'scenario': NAME, 'hosts': hosts, 'workers': 2,
              'conductors': CONDUCTORS,
              'tracker_processes': TRACKER_PROCESSES}
    with Deployment(options, hosts, used=USED, label='churn') as dep:
        result['populate_s'] = round(dep.populate_seconds, 2)
        with dep.server(2) as server:
            result['baseline'] = _summary(
                _schedule(options, dep, server, options.seed))
            churn = _churn(options, dep, server)
        result['overcommitted'] = dep.audit()['overcommitted']
    result['churn'] = churn
    result['absorbed_per_s'] = churn['absorbed_per_s']
    base = result['baseline']['latency']['p99']
    result['p99_increase_pct'] = round(
        100.0 * (churn['scheduling']['latency']['p99'] - base) / base, 1) \
        if base else None
    result['p99_ratio'] = round(
        churn['scheduling']['latency']['p99'] / base, 2) if base else None
    return result


def render(result):
    c = result['churn']
    base, busy = result['baseline'], c['scheduling']
    latency = report.table(
        ['phase', 'placements/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        [['scheduling alone', base['placements_per_s'],
          base['latency']['p50'], base['latency']['p90'],
          base['latency']['p99'], base['latency']['max']],
         ['scheduling + %d updates/s offered' % c['offered_per_s'],
          busy['placements_per_s'], busy['latency']['p50'],
          busy['latency']['p90'], busy['latency']['p99'],
          busy['latency']['max']]])
    updates = report.table(
        ['hosts', 'offered/s', 'sent/s', 'absorbed/s (window)',
         'absorbed total', 'sent', 'backlog drained after s',
         'p99 change'],
        [[result['hosts'], c['offered_per_s'], c['sent_per_s'],
          c['absorbed_per_s'], c['absorbed_total'], c['sent'],
          c['drained_after_s'] if c['drained_after_s'] is not None
          else '>%ds' % c['drain_limit_s'],
          '%+.0f%%' % result['p99_increase_pct']
          if result['p99_increase_pct'] is not None else '-']])
    return latency + '\n' + updates


def draw(pyplot, result):
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(9, 4))
    c = result['churn']
    left.bar(['offered', 'sent', 'absorbed'],
             [c['offered_per_s'], c['sent_per_s'], c['absorbed_per_s']])
    left.axhline(2000, color='red', linestyle='--', label='target')
    left.set_ylabel('updates/s')
    left.set_title('churn: stats updates')
    left.legend(fontsize=8)
    phases = ['alone', 'with churn']
    lat = [result['baseline']['latency'], c['scheduling']['latency']]
    right.bar(phases, [x['p99'] for x in lat], color='tab:orange',
              label='p99')
    right.bar(phases, [x['p50'] for x in lat], color='tab:blue',
              label='p50')
    right.set_ylabel('ms')
    right.set_title('select_destinations latency')
    right.legend(fontsize=8)
    return figure
