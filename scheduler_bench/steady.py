"""Scenario ``steady``: a real cloud's steady state, trackers re-reporting.

A 10k-host cluster (30% used) and a 2-worker ``scheduler-server``. A
separate process plays every host's tracker: each host reports once every
``PERIOD`` seconds (10k hosts: 167 reports/s), its usage moving as a
real tracker's does after a build or a delete (``vcpus_used``,
``memory_mb_used``, ``local_gb_used`` and ``running_vms``, each report
an instance away from the one before: ``workload.tracker_stats``), so
every report is a real change the workers must learn of. While the
reports flow, one conductor measures latency, then 16 conductors measure
throughput.

The floor is a bare oslo.messaging call on the same broker
(``scheduler_bench.rpcfloor``), timed right before each layout starts
(before its trackers): issue 22 asks for a one-conductor p50 within 3x
of that call's p50, which moves with this machine's speed, so it is
measured in the same run and the target is the ratio to it.

The same run is then repeated with one report worker beside the two
(``[DEFAULT] report_workers = 1``: reports in a process of their own, so
decisions no longer share an interpreter lock with report threads). The
targets are judged on the two workers alone; the report-worker layout is
printed beside them.

Reports absorbed are counted as in ``churn`` (the sum of the hosts'
stored ``bench_beat``: a report written, or superseded by a newer one of
its host before being written). Overcommit is audited in the database
afterwards.
"""

import threading
import time

from scheduler_bench import churn
from scheduler_bench import conductors
from scheduler_bench import report
from scheduler_bench import rpcfloor
from scheduler_bench import settings
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment
from scheduler.client import SchedulerClient
from scheduler.context import RequestContext

NAME = 'steady'
HOSTS = 10000
PERIOD = 60.0
USED = 0.3
TRACKER_THREADS = 2
LATENCY_S, THROUGHPUT_S = 10.0, 10.0
QUICK_S = 3.0
CONDUCTORS = 16
FLOOR_CALLS, QUICK_FLOOR_CALLS = 1000, 150

TARGETS = (
    report.Target('steady: one conductor p50 / bare call p50',
                  ('latency_ratio',), '<=', 3, 'x'),
    report.Target('steady: one conductor p99', ('latency', 'latency', 'p99'),
                  '<=', 20, ' ms'),
    report.Target('steady: placements/s with 16 conductors',
                  ('throughput', 'placements_per_s'), '>=', 300, '/s'),
    report.Target('overcommitted inventories', ('overcommitted',), '==', 0),
    report.Target('steady, 1 report worker beside: one conductor p50 / '
                  'bare call p50', ('report_worker', 'latency_ratio'), '<=',
                  3, 'x'),
    report.Target('steady, 1 report worker beside: one conductor p99',
                  ('report_worker', 'latency', 'latency', 'p99'), '<=', 20,
                  ' ms'),
    report.Target('steady, 1 report worker beside: placements/s, 16 '
                  'conductors', ('report_worker', 'throughput',
                                 'placements_per_s'), '>=', 300, '/s'),
)

#: (result key, server options): the layouts measured, the targets' first
LAYOUTS = ((None, None),
           ('report_worker', {'DEFAULT': {'report_workers': 1}}))


def _stats(index, beat):
    """A tracker's report: its usage moves by an instance built or
    deleted (``workload.tracker_stats``)."""
    return workload.tracker_stats(index, beat, USED)


def _trackers_main(client_values, hosts, duration, first_beat, ready, go,
                   start_at, results):
    """Every host reports once per PERIOD, from TRACKER_THREADS threads;
    beats count on from ``first_beat`` (above any earlier run's)."""
    settings.quiet_client_logs()
    client = SchedulerClient(settings.make_conf(client_values))
    ctxt = RequestContext(project_id='bench', user_id='bench',
                           roles=['service'])
    sent = []
    threads = [threading.Thread(target=_tracker_thread, args=(
        client, ctxt, list(range(t, hosts, TRACKER_THREADS)), duration,
        first_beat, sent)) for t in range(TRACKER_THREADS)]
    ready.put(0)
    go.wait()
    time.sleep(max(0.0, start_at.value - time.time()))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    results.put({'sent': sum(sent)})


def _tracker_thread(client, ctxt, mine, duration, first_beat, sent):
    rate = len(mine) / PERIOD
    started = time.monotonic()
    count = 0
    while time.monotonic() - started < duration:
        due = started + count / rate
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        index = mine[count % len(mine)]
        client.update_resource_stats(
            ctxt, workload.host_name(index),
            _stats(index, first_beat + count // len(mine)))
        count += 1
    sent.append(count)


def _measure(options, dep, server, threads, seconds, seed):
    mix = workload.RequestMix(seed)
    requests = [(f, 1, z) for f, z in (mix.next() for _ in range(20000))]
    return churn._summary(conductors.run(conductors.Load(
        client=dep.client(server), requests=requests, threads=threads,
        duration=seconds, max_requests=options.requests or 0)))


def _layout(options, dep, hosts, extra, first_beat):
    """One run of trackers and conductors against a new server."""
    latency_s = options.pick(LATENCY_S, QUICK_S)
    throughput_s = options.pick(THROUGHPUT_S, QUICK_S)
    result = {'rpc_floor': rpcfloor.measure(
        options.count(FLOOR_CALLS, QUICK_FLOOR_CALLS))}
    with dep.server(2, extra) as server:
        duration = latency_s + throughput_s + 10.0
        with conductors.ProcessGroup(_trackers_main, [(
                dep.client(server), hosts, duration,
                first_beat)]) as trackers:
            trackers.wait_ready()
            before = churn._absorbed(dep.db, first_beat - 1)
            start_at = trackers.go()
            # let the reports flow for a few seconds first
            time.sleep(max(0.0, start_at + 3.0 - time.time()))
            result['latency'] = _measure(options, dep, server, 1,
                                         latency_s, options.seed)
            result['throughput'] = _measure(
                options, dep, server, CONDUCTORS, throughput_s,
                options.seed + 1)
            absorbed = churn._absorbed(dep.db, first_beat - 1) - before
            elapsed = time.time() - start_at
            sent = trackers.results(duration + 120)
        result['conflicts'] = server.claim_conflicts()
    result['reports_sent'] = sum(s['sent'] for s in sent)
    result['reports_absorbed_per_s'] = round(absorbed / elapsed, 1)
    result['latency_ratio'] = round(
        result['latency']['latency']['p50'] / result['rpc_floor']['p50'], 2)
    return result


def run(options):
    hosts = options.size(HOSTS, HOSTS)
    result = {'scenario': NAME, 'hosts': hosts, 'workers': 2,
              'reports_per_s_offered': round(hosts / PERIOD, 1)}
    with Deployment(options, hosts, used=USED, label='steady') as dep:
        for number, (key, extra) in enumerate(LAYOUTS):
            # a run lasts less than 1000 periods: its beats stay above the
            # previous run's, so what it absorbs is counted
            measured = _layout(options, dep, hosts, extra,
                               1 + 1000 * number)
            if key is None:
                result.update(measured)
            else:
                result[key] = measured
        result['overcommitted'] = dep.audit()['overcommitted']
    return result


_LAYOUT_NAMES = {None: '2 workers',
                 'report_worker': '2 workers + 1 report worker'}


def render(result):
    phases, absorbed, floors = [], [], []
    for key, _ in LAYOUTS:
        measured = result if key is None else result.get(key)
        if measured is None:
            continue
        name = _LAYOUT_NAMES[key]
        for label, series in (('1 conductor', measured['latency']),
                              ('%d conductors' % CONDUCTORS,
                               measured['throughput'])):
            lat = series['latency']
            phases.append([name, label, series['placements_per_s'],
                           lat['p50'], lat['p90'], lat['p99'], lat['max'],
                           series['errors']])
        floors.append([name, measured['rpc_floor']['p50'],
                       measured['latency']['latency']['p50'],
                       measured['latency_ratio']])
        absorbed.append([name, result['hosts'],
                         result['reports_per_s_offered'],
                         measured['reports_absorbed_per_s'],
                         measured['reports_sent'], measured['conflicts']])
    return report.table(
        ['layout', 'phase', 'placements/s', 'p50 ms', 'p90 ms', 'p99 ms',
         'max ms', 'errors'], phases) + '\n' + report.table(
            ['layout', 'hosts', 'reports/s offered', 'absorbed/s', 'sent',
             'claim conflicts'], absorbed) + '\n' + report.table(
                ['layout', 'bare call p50 ms', 'one conductor p50 ms',
                 'ratio'], floors) + \
        '\novercommitted inventories: %s' % result['overcommitted']


def draw(pyplot, result):
    figure, axis = pyplot.subplots(figsize=(5, 4))
    lat = [result['latency']['latency'], result['throughput']['latency']]
    names = ['1 conductor', '%d conductors' % CONDUCTORS]
    axis.bar(names, [x['p99'] for x in lat], color='tab:orange',
             label='p99')
    axis.bar(names, [x['p50'] for x in lat], color='tab:blue', label='p50')
    axis.set_ylabel('ms')
    axis.set_title('steady: latency while trackers re-report')
    axis.legend(fontsize=8)
    return figure
