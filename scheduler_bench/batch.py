"""Scenario ``batch``: requests of 1, 10 and 100 instances.

An empty 10k-host cluster and a 2-worker ``scheduler-server``; for each
request size, conductors send requests of that many instances of one
flavor back to back for a fixed time. Every request is planned in memory
and claimed in one transaction (all instances or none), so instances/s
shows how planning and claiming scale with the batch.
"""

from scheduler_bench import conductors
from scheduler_bench import report
from scheduler_bench import stats
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment

NAME = 'batch'
HOSTS = 10000
WORKERS = 2
#: request size -> conductor threads
SIZES = {1: 16, 10: 8, 100: 4}

TARGETS = (
    report.Target('instances/s in 100-instance requests',
                  ('sizes', '100', 'instances_per_s'), '>=', 2000, '/s'),
    report.Target('overcommitted inventories', ('overcommitted',), '==', 0),
)


def _one_size(options, dep, server, size, threads):
    mix = workload.RequestMix(options.seed + size, zoned_share=0.0)
    requests = [(flavor, size, None)
                for flavor, _ in (mix.next() for _ in range(5000))]
    results = conductors.run(conductors.Load(
        client=dep.client(server), requests=requests, threads=threads,
        duration=options.pick(8.0, 2.5),
        max_requests=options.requests or 0))
    ok = results.ok()
    placed = results.placed()
    return {'instances_per_request': size, 'conductors': threads,
            'requests': len(results.samples), 'instances': placed,
            'instances_per_s': round(stats.rate(placed, results.span()), 1),
            'requests_per_s': round(stats.rate(len(ok), results.span()), 1),
            'latency': stats.summarize([s[1] for s in ok]),
            'no_valid_host': sum(1 for s in results.samples
                                 if s[4] == 'novalidhost'),
            'errors': len(results.errors())}


def run(options):
    hosts = options.size(HOSTS, HOSTS)
    result = {'scenario': NAME, 'hosts': hosts, 'workers': WORKERS,
              'sizes': {}}
    with Deployment(options, hosts, label='batch') as dep:
        result['populate_s'] = round(dep.populate_seconds, 2)
        with dep.server(WORKERS) as server:
            for size, threads in SIZES.items():
                result['sizes'][str(size)] = _one_size(
                    options, dep, server, size, threads)
        audit = dep.audit()
    result['overcommitted'] = audit['overcommitted']
    return result


def render(result):
    columns = ['instances/request', 'conductors', 'requests', 'instances',
               'instances/s', 'requests/s', 'p50 ms', 'p99 ms',
               'NoValidHost', 'errors']
    rows = [[r['instances_per_request'], r['conductors'], r['requests'],
             r['instances'], r['instances_per_s'], r['requests_per_s'],
             r['latency']['p50'], r['latency']['p99'], r['no_valid_host'],
             r['errors']] for r in result['sizes'].values()]
    return report.table(columns, rows) + '\n%d hosts, %d workers, ' \
        'overcommitted inventories: %d' % (
            result['hosts'], result['workers'], result['overcommitted'])


def draw(pyplot, result):
    figure, axes = pyplot.subplots(figsize=(6, 4))
    sizes = list(result['sizes'])
    axes.bar(sizes, [result['sizes'][s]['instances_per_s'] for s in sizes])
    axes.axhline(2000, color='red', linestyle='--',
                 label='target (100-instance requests)')
    axes.set_xlabel('instances per request')
    axes.set_ylabel('instances/s')
    axes.set_title('batch: throughput, %d workers' % result['workers'])
    axes.legend(fontsize=8)
    return figure
