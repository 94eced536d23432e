"""Scenario ``storm``: many conductors at once against 1, 2 and 4 workers.

A 10k-host cluster, 70% used on average (each host 60-80%, held by
allocations, so the database's ``claimed`` matches what trackers report),
serves single-instance requests of the flavor mix from C concurrent
conductors for a fixed time, once per worker count, each time with a
fresh ``scheduler-server``. Measured: placements/s, claim conflicts per
placement (the workers log each one), latency, and, from the database
afterwards, overcommitted inventories (must be 0).

With 2 workers the conductors run twice, as threads of one process and
as threads spread over two processes, which shows whether the client's
GIL bounds the throughput.
"""

from scheduler_bench import cluster
from scheduler_bench import conductors
from scheduler_bench import report
from scheduler_bench import stats
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment

NAME = 'storm'
HOSTS = 10000
USED, JITTER = 0.7, 0.1
CONDUCTORS = 16

TARGETS = (
    report.Target('single-instance placements/s with 2 workers',
                  ('by_workers', '2', 'placements_per_s'), '>=', 350, '/s'),
    report.Target('claim conflicts per placement, 4 workers, 70% used',
                  ('by_workers', '4', 'conflict_pct'), '<', 1, '%'),
    report.Target('overcommitted inventories (all runs)',
                  ('overcommitted',), '==', 0),
)


def _layouts(options):
    """(workers, conductor processes) pairs to run."""
    if options.quick:
        return ((2, 1), (4, 1))
    return ((1, 1), (2, 1), (2, 2), (4, 2))


def _one_run(options, dep, workers, processes, requests):
    duration = options.pick(10.0, 3.0)
    with dep.server(workers) as server:
        results = conductors.run(conductors.Load(
            client=dep.client(server), requests=requests,
            threads=CONDUCTORS // processes, duration=duration,
            max_requests=options.requests or 0), processes)
        conflicts = server.claim_conflicts()
    audit = dep.audit()
    ok = results.ok()
    placed = results.placed()
    span = results.span()
    return {
        'workers': workers, 'conductor_processes': processes,
        'conductors': CONDUCTORS, 'requests': len(results.samples),
        'placements': placed,
        'placements_per_s': round(stats.rate(placed, span), 1),
        'claim_conflicts': conflicts,
        'conflict_pct': round(100.0 * conflicts / max(placed, 1), 2),
        'latency': stats.summarize([s[1] for s in ok]),
        'no_valid_host': sum(1 for s in results.samples
                             if s[4] == 'novalidhost'),
        'errors': len(results.errors()),
        'client_cpu_share': round(results.client_cpu_share(), 2),
        'overcommitted': audit['overcommitted'],
        'claimed_mismatch': audit['claimed_mismatch'],
    }


def run(options):
    hosts = options.size(HOSTS, HOSTS)
    mix = workload.RequestMix(options.seed)
    requests = [(flavor, 1, zone)
                for flavor, zone in (mix.next() for _ in range(20000))]
    result = {'scenario': NAME, 'hosts': hosts, 'used': USED,
              'runs': [], 'by_workers': {}}
    with Deployment(options, hosts, used=USED, jitter=JITTER,
                    label='storm') as dep:
        result['populate_s'] = round(dep.populate_seconds, 2)
        for workers, processes in _layouts(options):
            run_result = _one_run(options, dep, workers, processes,
                                  requests)
            result['runs'].append(run_result)
            best = result['by_workers'].get(str(workers))
            if (best is None or run_result['placements_per_s']
                    > best['placements_per_s']):
                result['by_workers'][str(workers)] = run_result
        result['utilization_after'] = cluster.utilization(dep.db)
    result['overcommitted'] = max(r['overcommitted'] for r in result['runs'])
    return result


def render(result):
    columns = ['workers', 'conductors', 'placed', 'placements/s',
               'conflicts', 'conflicts %', 'p50 ms', 'p99 ms', 'NoValidHost',
               'errors', 'client CPU', 'overcommit']
    rows = []
    for r in result['runs']:
        rows.append([
            r['workers'], '%d (%d proc)' % (r['conductors'],
                                           r['conductor_processes']),
            r['placements'], r['placements_per_s'], r['claim_conflicts'],
            r['conflict_pct'], r['latency']['p50'], r['latency']['p99'],
            r['no_valid_host'], r['errors'], r['client_cpu_share'],
            r['overcommitted']])
    return report.table(columns, rows) + '\n%d hosts, %.0f%% used before; ' \
        'after: %s' % (result['hosts'], 100 * result['used'], ', '.join(
            '%s %.1f%%' % (rc, 100 * v)
            for rc, v in sorted(result['utilization_after'].items())))


def draw(pyplot, result):
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(9, 4))
    labels = ['%dw/%dp' % (r['workers'], r['conductor_processes'])
              for r in result['runs']]
    left.bar(labels, [r['placements_per_s'] for r in result['runs']])
    left.axhline(300, color='red', linestyle='--', label='target (2 workers)')
    left.set_ylabel('placements/s')
    left.set_title('storm: throughput')
    left.legend(fontsize=8)
    right.bar(labels, [r['latency']['p99'] for r in result['runs']],
              color='tab:orange', label='p99')
    right.bar(labels, [r['latency']['p50'] for r in result['runs']],
              color='tab:blue', label='p50')
    right.set_ylabel('ms')
    right.set_title('storm: latency')
    right.legend(fontsize=8)
    return figure
