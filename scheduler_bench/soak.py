"""Scenario ``soak``: a steady load for ten minutes; nothing may grow.

A 1,000-host cluster (30% used) and a 2-worker ``scheduler-server`` take a
fixed rate of placements (20/s, each released again at once with
``delete_allocations``, so capacity never runs out) and of tracker
reports (50/s, every one a real change) for 10 minutes (with ``--quick``,
three windows of 20 s stand for the minutes; ``--hosts`` sets the
cluster's size). Each minute prints the placements made, errors, p50 and
p99 latency and the workers' resident memory. The targets: RSS of the
last minute within 10% of the first, p99 within 10% of the first
minute's, beyond 5 ms (a few ms of noise is not growth), and no long
tail: p99 within 5 times p50 in every minute (issue 22).
"""

import collections
import threading
import time
import uuid

from scheduler_bench import churn
from scheduler_bench import report
from scheduler_bench import settings
from scheduler_bench import stats
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment
from scheduler.client import SchedulerClient
from scheduler.context import RequestContext

NAME = 'soak'
HOSTS = 1000
PLACE_RATE, REPORT_RATE = 20.0, 50.0
MINUTE = 60.0

TARGETS = (
    report.Target('worker RSS growth, last minute vs first',
                  ('rss_growth_pct',), '<', 10, '%'),
    report.Target('p99 growth beyond noise, last minute vs first',
                  ('p99_growth_pct',), '<', 10, '%'),
    report.Target('p99 / p50, worst minute', ('tail_ratio',), '<=', 5),
    report.Target('errors', ('errors',), '==', 0),
    report.Target('overcommitted inventories', ('overcommitted',), '==', 0),
)


class _Paced(threading.Thread):
    """Calls ``action(n)`` ``rate`` times a second until ``stop`` is set."""

    def __init__(self, rate, action, stop):
        super().__init__(daemon=True)
        self.rate, self.action, self.stop = rate, action, stop

    def run(self):
        started, n = time.monotonic(), 0
        while not self.stop.is_set():
            self.action(n)
            n += 1
            delay = started + n / self.rate - time.monotonic()
            if delay > 0:
                self.stop.wait(delay)


class _Load:
    """Placements and reports against one server, recorded per minute."""

    def __init__(self, client, hosts):
        self.client, self.hosts = client, hosts
        # the service role: conductors and trackers carry it (policy)
        self.ctxt = RequestContext(project_id='bench', user_id='bench',
                                   roles=['service'])
        self.lock = threading.Lock()
        self.samples = []        # (monotonic time, seconds or None)
        self.error_kinds = collections.Counter()
        self.spec = workload.request_spec('m1.small')

    def place(self, n):
        consumer = str(uuid.uuid4())
        started = time.monotonic()
        try:
            self.client.select_destinations(self.ctxt, self.spec,
                                            instance_uuids=[consumer])
            took = time.monotonic() - started
        except Exception as exc:  # counted as an error of that minute
            took = None
            with self.lock:
                self.error_kinds[type(exc).__name__] += 1
        with self.lock:
            self.samples.append((started, took))
        if took is not None:
            self.client.delete_allocations(self.ctxt, consumer)

    def report(self, n):
        index = n % self.hosts
        self.client.update_resource_stats(
            self.ctxt, workload.host_name(index), churn._stats(index, n))


def _minutes(load, start, minutes, server, length=MINUTE):
    rows = []
    for minute in range(minutes):
        end = start + (minute + 1) * length
        time.sleep(max(0.0, end - time.monotonic()))
        with load.lock:
            window = [s for s in load.samples if end - length <= s[0] < end]
        ok = [s[1] for s in window if s[1] is not None]
        summary = stats.summarize(ok)
        rows.append({'minute': minute + 1, 'placements': len(ok),
                     'errors': len(window) - len(ok),
                     'p50_ms': summary['p50'], 'p99_ms': summary['p99'],
                     'rss_mb': round(sum(server.worker_rss_mb()), 1)})
    return rows


def _growth(first, last, floor=0.0):
    if not first:
        return None
    return round(100.0 * max(0.0, last - first - floor) / first, 1)


def _tail_ratio(rows):
    """The worst minute's p99 / p50 (None without a sample)."""
    ratios = [r['p99_ms'] / r['p50_ms'] for r in rows if r['p50_ms'] > 0]
    return round(max(ratios), 2) if ratios else None


def run(options):
    minutes = int(options.pick(10, 3))
    length = options.pick(MINUTE, MINUTE / 3)
    hosts = options.size(HOSTS, HOSTS)
    result = {'scenario': NAME, 'hosts': hosts, 'workers': 2,
              'placements_per_s': PLACE_RATE, 'reports_per_s': REPORT_RATE}
    with Deployment(options, hosts, used=0.3, label='soak') as dep:
        with dep.server(2) as server:
            settings.quiet_client_logs()
            client = SchedulerClient(settings.make_conf(dep.client(server)))
            load, stop = _Load(client, hosts), threading.Event()
            threads = [_Paced(PLACE_RATE / 2, load.place, stop)
                       for _ in range(2)]
            threads.append(_Paced(REPORT_RATE, load.report, stop))
            start = time.monotonic()
            for thread in threads:
                thread.start()
            rows = _minutes(load, start, minutes, server, length)
            stop.set()
            for thread in threads:
                thread.join(60)
            client.close()
        result['overcommitted'] = dep.audit()['overcommitted']
    result['minutes'] = rows
    result['errors'] = sum(r['errors'] for r in rows)
    result['error_kinds'] = dict(load.error_kinds)
    result['rss_growth_pct'] = _growth(rows[0]['rss_mb'], rows[-1]['rss_mb'])
    result['p99_growth_pct'] = _growth(rows[0]['p99_ms'], rows[-1]['p99_ms'],
                                       floor=5.0)
    result['tail_ratio'] = _tail_ratio(rows)
    return result


def render(result):
    table = report.table(
        ['minute', 'placements', 'errors', 'p50 ms', 'p99 ms',
         'workers RSS MiB'],
        [[r['minute'], r['placements'], r['errors'], r.get('p50_ms'),
          r['p99_ms'], r['rss_mb']] for r in result['minutes']])
    if result.get('error_kinds'):
        table += '\nerrors by kind: %s' % ', '.join(
            '%s %d' % kv for kv in sorted(result['error_kinds'].items()))
    return table


def draw(pyplot, result):
    figure, left = pyplot.subplots(figsize=(6, 4))
    minutes = [r['minute'] for r in result['minutes']]
    left.plot(minutes, [r['p99_ms'] for r in result['minutes']],
              label='p99 ms')
    right = left.twinx()
    right.plot(minutes, [r['rss_mb'] for r in result['minutes']],
               color='tab:orange', label='RSS MiB')
    left.set_xlabel('minute')
    left.set_title('soak: p99 and worker memory per minute')
    return figure
