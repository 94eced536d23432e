"""Scenario ``latency``: how long one decision takes at 1k, 10k, 100k hosts.

For each cluster size, on a fresh database:

1. cold load: the first full refresh of an in-process host cache;
2. in process (no RPC): ``select_destinations`` on the manager, one
   request at a time, split into decision (in-memory filter/weigh/pick),
   refresh and claim (see ``scheduler_bench.inprocess``);
3. end to end: one conductor calling ``SchedulerClient.select_destinations``
   over RabbitMQ, one request at a time, against a ``scheduler-server``
   with 2 workers claiming in the database; then each worker's RSS.

Once per run, a bare oslo.messaging call to an echo server gives the
broker's floor (``scheduler_bench.rpcfloor``).

Requests are single instances of the flavor mix, a quarter of them bound to
a zone; the clusters start empty.
"""

import sys

from scheduler_bench import conductors
from scheduler_bench import report
from scheduler_bench import rpcfloor
from scheduler_bench import stats
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment
from scheduler_bench.inprocess import TimedScheduler
from scheduler_bench.progress import Progress

NAME = 'latency'
SCALES = (1000, 10000, 100000)
QUICK_SCALES = (1000, 10000)
SERVER_WORKERS = 2

TARGETS = (
    report.Target('decision p99 at 10k hosts',
                  ('scales', '10000', 'decision', 'p99'), '<=', 1, 'ms'),
    report.Target('decision p99 at 100k hosts',
                  ('scales', '100000', 'decision', 'p99'), '<=', 4, 'ms'),
    report.Target('end-to-end p50 at 10k hosts (RabbitMQ, DB claims)',
                  ('scales', '10000', 'end_to_end', 'p50'), '<=', 6, 'ms'),
    report.Target('end-to-end p99 at 10k hosts (RabbitMQ, DB claims)',
                  ('scales', '10000', 'end_to_end', 'p99'), '<=', 20, 'ms'),
    report.Target('cold load of 100k hosts',
                  ('scales', '100000', 'cold_load_s'), '<=', 2, 's'),
    report.Target('RSS per worker at 100k hosts',
                  ('scales', '100000', 'worker_rss_mb'), '<=', 500, 'MB'),
)


def _iterations(options, hosts):
    """(in-process requests, end-to-end requests) at ``hosts``."""
    if hosts >= 100000:
        return options.count(300, 100), options.count(400, 100)
    return options.count(1000, 150), options.count(1000, 150)


def _in_process(options, dep, count):
    scheduler = TimedScheduler(dep.manager())
    cold = scheduler.cold_load()
    mix = workload.RequestMix(options.seed)
    timings = []
    with Progress('latency %d hosts: in-process' % dep.hosts, total=count,
                  enabled=options.progress) as bar:
        for _ in range(count):
            flavor, zone = mix.next()
            spec = workload.request_spec(flavor, 1, zone)
            selections, timing = scheduler.select(spec)
            if selections is not None:
                timings.append(timing)
            bar.update()
    return {
        'cold_load_s': round(cold, 3),
        'decision': stats.summarize([t.decision for t in timings]),
        'refresh': stats.summarize([t.refresh for t in timings]),
        'claim': stats.summarize([t.claim for t in timings]),
        'in_process': stats.summarize([t.total for t in timings]),
        'claim_timed': all(t.claim_timed for t in timings),
        'no_valid_host': count - len(timings),
    }


def _end_to_end(options, dep, count):
    mix = workload.RequestMix(options.seed + 1)
    requests = [(flavor, 1, zone)
                for flavor, zone in (mix.next() for _ in range(count))]
    with dep.server(SERVER_WORKERS) as server:
        print('latency %d hosts: end-to-end, %d requests, server up in '
              '%.1fs' % (dep.hosts, count, server.started_in),
              file=sys.stderr)
        results = conductors.run(conductors.Load(
            client=dep.client(server), requests=requests, threads=1,
            duration=options.pick(120, 60), max_requests=count))
        rss = server.worker_rss_mb()
    ok = results.ok()
    return {
        'end_to_end': stats.summarize([s[1] for s in ok]),
        'end_to_end_failed': len(results.samples) - len(ok),
        'server_start_s': round(server.started_in, 2),
        'worker_rss_mb': round(max(rss), 1) if rss else None,
        'worker_rss_all_mb': [round(r, 1) for r in rss],
    }


def run(options):
    result = {'scenario': NAME, 'server_workers': SERVER_WORKERS,
              'scales': {}}
    if options.rpc:
        result['rpc_floor'] = rpcfloor.measure(options.count(1000, 150))
    for hosts in options.scales(SCALES, QUICK_SCALES):
        local, remote = _iterations(options, hosts)
        with Deployment(options, hosts, label='latency') as dep:
            scale = {'hosts': hosts,
                     'populate_s': round(dep.populate_seconds, 2)}
            scale.update(_in_process(options, dep, local))
            if options.rpc:
                scale.update(_end_to_end(options, dep, remote))
            scale['audit'] = dep.audit()
        result['scales'][str(hosts)] = scale
    return result


def render(result):
    columns = ['hosts', 'path', 'n', 'p50 ms', 'p90 ms', 'p99 ms',
               'max ms']
    rows = []
    paths = (('decision', 'decision (in-memory, in-process)'),
             ('refresh', 'refresh (in-process)'),
             ('claim', 'claim transaction (in-process)'),
             ('in_process', 'select_destinations in-process'),
             ('end_to_end', 'end-to-end via RabbitMQ'))
    for hosts, scale in result['scales'].items():
        for key, label in paths:
            s = scale.get(key)
            if s is None:
                continue
            rows.append([hosts, label, s['count'], s['p50'], s['p90'],
                         s['p99'], s['max']])
    floor = result.get('rpc_floor')
    if floor:
        rows.append(['-', 'bare oslo.messaging call (broker floor)',
                     floor['count'], floor['p50'], floor['p90'],
                     floor['p99'], floor['max']])
    latency = report.table(columns, rows)
    columns = ['hosts', 'populate s', 'cold load s', 'server start s',
               'RSS/worker MB', 'overcommitted', 'e2e failed']
    rows = [[hosts, s['populate_s'], s['cold_load_s'],
             s.get('server_start_s'), s.get('worker_rss_mb'),
             s['audit']['overcommitted'], s.get('end_to_end_failed')]
            for hosts, s in result['scales'].items()]
    return latency + '\n' + report.table(columns, rows)


def draw(pyplot, result):
    figure, axes = pyplot.subplots(figsize=(8, 4.5))
    scales = list(result['scales'])
    paths = (('decision', 'decision'), ('in_process', 'in-process'),
             ('end_to_end', 'end-to-end'))
    width = 0.8 / (2 * len(paths))
    for i, (key, label) in enumerate(paths):
        for j, pct in enumerate(('p50', 'p99')):
            offset = (2 * i + j) * width - 0.4 + width / 2
            values = [result['scales'][s].get(key, {}).get(pct, 0)
                      for s in scales]
            axes.bar([x + offset for x in range(len(scales))], values,
                     width, label='%s %s' % (label, pct))
    axes.set_xticks(range(len(scales)))
    axes.set_xticklabels(['%s hosts' % s for s in scales])
    axes.set_yscale('log')
    axes.set_ylabel('ms (log scale)')
    axes.set_title('select_destinations latency')
    axes.legend(fontsize=8, ncol=3)
    return figure
