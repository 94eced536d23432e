"""Scenario ``fill``: pack an empty cluster until nothing fits any more.

In process (no RPC), with packing weighers (RAM, CPU and disk multipliers
-1) and claims in the database, one conductor places single instances of
the flavor mix until every (flavor, zone) is refused. Each refusal is
checked against the offline ``CapacityOracle``, which follows the cluster
only from the population and the destinations returned: a NoValidHost
while the oracle still finds a host is a *false* NoValidHost (must be 0).
A (flavor, zone) leaves the mix once the oracle agrees it fits nowhere,
so the run ends exactly when the cluster is full for the mix.

Reported: placements, false NoValidHost, stranded capacity (free but on
hosts where not even the smallest flavor fits), overcommit from the
database, and latency by cluster utilization, as the feasible set shrinks.
"""

import random

import numpy as np

from scheduler.model import resource_classes as rcs
from scheduler_bench import cluster
from scheduler_bench import report
from scheduler_bench import stats
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment
from scheduler_bench.inprocess import TimedScheduler
from scheduler_bench.oracle import CapacityOracle
from scheduler_bench.progress import Progress

NAME = 'fill'
HOSTS, QUICK_HOSTS = 200, 40
PACKING = {'filter_scheduler': {'ram_weight_multiplier': -1.0,
                                'cpu_weight_multiplier': -1.0,
                                'disk_weight_multiplier': -1.0}}
EDGES = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0)

TARGETS = (
    report.Target('false NoValidHost (vs. offline oracle)',
                  ('false_no_valid_host',), '==', 0),
    report.Target('overcommitted inventories', ('overcommitted',), '==', 0),
)


class _Mix:
    """Live (flavor, zone) pairs; zone None (anywhere) 3 times in 4."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.live = {(f, z) for f in workload.FLAVORS
                     for z in (None,) + workload.ZONES}

    def next(self):
        anywhere = sorted(p for p in self.live if p[1] is None)
        zoned = sorted(p for p in self.live if p[1] is not None)
        if anywhere and (not zoned or self.rng.random() < 0.75):
            return self.rng.choice(anywhere)
        return self.rng.choice(zoned)

    def exhausted(self, flavor, zone):
        if zone is None:
            self.live -= {(flavor, z) for z in (None,) + workload.ZONES}
        else:
            self.live.discard((flavor, zone))


def _expected_placements(population):
    """Rough count of single instances that fill the cluster."""
    memory = population.capacity[rcs.MEMORY_MB].sum()
    mean = np.mean([f['memory_mb'] for f in workload.FLAVORS.values()])
    return int(memory / mean)


def _fill(options, dep, scheduler, oracle):
    row_of = {u: i for i, u in enumerate(dep.population.uuids)}
    mix = _Mix(options.seed)
    samples, false_nvh, refusals = [], [], 0
    limit = 10 * _expected_placements(dep.population) + 100
    with Progress('fill %d hosts' % dep.hosts,
                  total=_expected_placements(dep.population),
                  enabled=options.progress) as bar:
        while mix.live and len(samples) < limit:
            flavor, zone = mix.next()
            resources = workload.flavor_resources(flavor)
            feasible = oracle.feasible(resources, zone)
            utilization = oracle.utilization()[rcs.MEMORY_MB]
            selections, timing = scheduler.select(
                workload.request_spec(flavor, 1, zone))
            if selections:
                oracle.place(row_of[selections[0][0].compute_node_uuid],
                             resources)
                samples.append((utilization, feasible, timing.decision,
                                timing.total))
                bar.update()
                continue
            refusals += 1
            if feasible:
                false_nvh.append({'flavor': flavor, 'zone': zone,
                                  'feasible_hosts': feasible,
                                  'utilization': round(utilization, 4)})
            else:
                mix.exhausted(flavor, zone)
    return samples, false_nvh, refusals


def run(options):
    hosts = options.size(HOSTS, QUICK_HOSTS)
    result = {'scenario': NAME, 'hosts': hosts,
              'weighers': 'RAM, CPU, Disk with multiplier -1 (pack)'}
    with Deployment(options, hosts, label='fill') as dep:
        pop = dep.population
        oracle = CapacityOracle(pop.capacity, pop.used, pop.zones,
                                pop.min_unit, pop.max_unit)
        scheduler = TimedScheduler(dep.manager(PACKING))
        scheduler.cold_load()
        samples, false_nvh, refusals = _fill(options, dep, scheduler,
                                             oracle)
        audit = dep.audit()
        db_used = cluster.utilization(dep.db)
    smallest = min((workload.flavor_resources(f) for f in workload.FLAVORS),
                   key=lambda r: r[rcs.MEMORY_MB])
    oracle_used = oracle.utilization()
    result.update({
        'placements': len(samples), 'refusals': refusals,
        'false_no_valid_host': len(false_nvh),
        'false_no_valid_host_examples': false_nvh[:10],
        'overcommitted': audit['overcommitted'],
        'claimed_mismatch': audit['claimed_mismatch'],
        'utilization': {rc: round(v, 4) for rc, v in oracle_used.items()},
        'oracle_matches_db': all(abs(db_used[rc] - oracle_used[rc]) < 1e-3
                                 for rc in oracle_used),
        'stranded': {rc: round(v, 4)
                     for rc, v in oracle.stranded(smallest).items()},
        'decision': stats.summarize([s[2] for s in samples]),
        'in_process': stats.summarize([s[3] for s in samples]),
        'by_utilization': _by_utilization(samples),
    })
    return result


def _by_utilization(samples):
    keys = [s[0] for s in samples]
    out = []
    decisions = stats.buckets(keys, [s[2] for s in samples], EDGES)
    totals = stats.buckets(keys, [s[3] for s in samples], EDGES)
    feasible = stats.buckets(keys, [s[1] for s in samples], EDGES)
    for (low, high, dec), (_, _, tot), (_, _, fea) in zip(
            decisions, totals, feasible):
        out.append({'utilization': '%d-%d%%' % (100 * low, 100 * high),
                    'placements': len(dec),
                    'feasible_hosts_median':
                        float(np.median(fea)) if fea else None,
                    'decision': stats.summarize(dec),
                    'in_process': stats.summarize(tot)})
    return out


def render(result):
    columns = ['RAM used', 'placements', 'feasible hosts (median)',
               'decision p50 ms', 'decision p99 ms', 'in-process p50 ms',
               'in-process p99 ms']
    rows = [[b['utilization'], b['placements'], b['feasible_hosts_median'],
             b['decision']['p50'], b['decision']['p99'],
             b['in_process']['p50'], b['in_process']['p99']]
            for b in result['by_utilization']]
    summary = report.table(
        ['hosts', 'placements', 'refusals', 'false NoValidHost',
         'overcommit', 'oracle = DB', 'used (VCPU/RAM/disk)',
         'stranded (VCPU/RAM/disk)'],
        [[result['hosts'], result['placements'], result['refusals'],
          result['false_no_valid_host'], result['overcommitted'],
          'yes' if result['oracle_matches_db'] else 'NO',
          _triple(result['utilization']), _triple(result['stranded'])]])
    return report.table(columns, rows) + '\n' + summary


def _triple(values):
    return ' / '.join('%.1f%%' % (100 * values[rc]) for rc in rcs.STANDARD)


def draw(pyplot, result):
    figure, axes = pyplot.subplots(figsize=(8, 4))
    buckets = [b for b in result['by_utilization'] if b['placements']]
    labels = [b['utilization'] for b in buckets]
    axes.plot(labels, [b['decision']['p50'] for b in buckets], 'o-',
              label='decision p50')
    axes.plot(labels, [b['decision']['p99'] for b in buckets], 'o--',
              label='decision p99')
    axes.plot(labels, [b['in_process']['p50'] for b in buckets], 's-',
              label='with claim p50')
    axes.set_xlabel('cluster RAM used')
    axes.set_ylabel('ms')
    twin = axes.twinx()
    twin.bar(labels, [b['feasible_hosts_median'] for b in buckets],
             alpha=0.2, color='grey', label='feasible hosts')
    twin.set_ylabel('feasible hosts (median)')
    axes.set_zorder(twin.get_zorder() + 1)  # lines over the bars
    axes.patch.set_visible(False)
    axes.set_title('fill: latency as the feasible set shrinks')
    axes.legend(fontsize=8, loc='upper left')
    return figure
