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

Then the drivers compared (``DRIVERS``): for each of
``filter_scheduler``, ``solver`` and ``solver, window`` (the solver with
``[solver] batch_window_ms`` 20, ``WINDOW_REQUESTS`` requests sent
together from as many threads, ``fill_window``), a fresh cluster of the
same hosts is filled by the same seeded trace of requests (half single
instances, a quarter anti-affinity gangs of 2-6 with
``max_server_per_host`` 1 or 2, a quarter affinity gangs of 2-4; a new
server group each, a flavor of the mix) until ``FULL_AFTER`` requests in
a row are refused: instances placed, beside the upper bound from the LP
relaxation of the requests offered (``fill_bound``: no scheduler, online
or offline, places more of them), requests refused, gangs refused
although one had a placement (exact for a gang of one flavor in a new
group), used and stranded capacity and decision p50/p99 of single
instances and of gangs.
"""

import random
import uuid

import numpy as np

from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler_bench import cluster
from scheduler_bench import fill_bound
from scheduler_bench import fill_window
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
# row -> (options over PACKING, requests sent together)
WINDOW_REQUESTS = 8
DRIVERS = {
    'filter_scheduler': ({'scheduler': {'driver': 'filter_scheduler'}}, 1),
    'solver': ({'scheduler': {'driver': 'solver'}}, 1),
    'solver, window': ({'scheduler': {'driver': 'solver'},
                        'solver': {'batch_window_ms': 20.0}},
                       WINDOW_REQUESTS),
}
# requests refused in a row that mean the cloud is full for the mix
FULL_AFTER = 40

TARGETS = (
    report.Target('false NoValidHost (vs. offline oracle)',
                  ('false_no_valid_host',), '==', 0),
    report.Target('overcommitted inventories', ('overcommitted',), '==', 0),
    report.Target('solver: gangs refused that had a placement',
                  ('drivers', 'solver', 'refused_placeable'), '==', 0),
    report.Target('overcommitted inventories (drivers compared)',
                  ('drivers_overcommitted',), '==', 0),
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
    smallest = _smallest()
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
    result['drivers'] = {name: _fill_with(options, hosts, name)
                         for name in DRIVERS}
    result['drivers_overcommitted'] = sum(
        r['overcommitted'] for r in result['drivers'].values())
    return result


def _trace(seed):
    """The seeded stream of ``(flavor, count, policy, max_per_host,
    group uuid)`` both drivers get (module docstring)."""
    rng = random.Random(seed)
    flavors = sorted(workload.FLAVORS)
    while True:
        flavor, kind = rng.choice(flavors), rng.random()
        group = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if kind < 0.5:
            yield flavor, 1, None, 1, group
        elif kind < 0.75:
            yield (flavor, rng.randint(2, 6), 'anti-affinity',
                   rng.choice((1, 2)), group)
        else:
            yield flavor, rng.randint(2, 4), 'affinity', 1, group


def _gang_spec(flavor, count, policy, max_per_host, group):
    spec = workload.request_spec(flavor, count)
    if policy:
        rules = ({'max_server_per_host': str(max_per_host)}
                 if policy == 'anti-affinity' else {})
        spec.instance_group = objects.InstanceGroup(
            uuid=group, policy=policy, rules=rules)
    return spec


def _placeable(oracle, resources, count, policy, max_per_host):
    """Could a new group's gang be placed now (exact: one flavor)?"""
    copies = np.where(oracle.fit_mask(resources), np.iinfo(np.int64).max, 0)
    for rc, amount in resources.items():
        copies = np.minimum(copies, oracle.free(rc) // amount)
    if policy == 'affinity':
        return bool((copies >= count).any())
    if policy == 'anti-affinity':
        copies = np.minimum(copies, max_per_host)
    return int(copies.sum()) >= count


def _fill_with(options, hosts, name):
    """Fill a fresh cluster with the trace, placed by driver row
    ``name`` (``DRIVERS``), in chunks of as many requests as its window
    takes (one for the others)."""
    extra, chunk = DRIVERS[name]
    with Deployment(options, hosts, label='fill-' + name) as dep:
        pop = dep.population
        row_of = {u: i for i, u in enumerate(pop.uuids)}
        oracle = _oracle(pop)
        scheduler = TimedScheduler(dep.manager(dict(PACKING, **extra)))
        scheduler.cold_load()
        submitter = fill_window.Submitter(scheduler, chunk)
        out = {'instances': 0, 'requests': 0, 'refused': 0,
               'refused_gangs': 0, 'refused_placeable': 0}
        times = {'single': [], 'gang': []}
        offered, trace, in_a_row = [], _trace(options.seed), 0
        while in_a_row < FULL_AFTER:
            requests = [next(trace) for _ in range(chunk)]
            placeable = [_placeable(oracle, workload.flavor_resources(f),
                                    count, policy, limit)
                         for f, count, policy, limit, _ in requests]
            answers = submitter.submit([_gang_spec(*r) for r in requests])
            for request, (selections, seconds) in zip(requests, answers):
                flavor, count, policy, limit, _ = request
                resources = workload.flavor_resources(flavor)
                offered.append((resources, count, policy, limit))
                times['gang' if count > 1 else 'single'].append(seconds)
                for per_instance in selections or ():
                    oracle.place(row_of[per_instance[0].compute_node_uuid],
                                 resources)
                out['instances'] += len(selections or ())
                in_a_row = 0 if selections else in_a_row + 1
            for request, placeable_before, (selections, _) in zip(
                    requests, placeable, answers):
                if selections:
                    continue
                flavor, count, policy, limit, _ = request
                # requests of one window race each other: a gang counts
                # when it had a placement before and after its window
                placeable_before = placeable_before and (
                    chunk == 1 or _placeable(
                        oracle, workload.flavor_resources(flavor), count,
                        policy, limit))
                out['refused'] += 1
                out['refused_gangs'] += int(count > 1)
                out['refused_placeable'] += int(count > 1 and
                                                placeable_before)
        submitter.close()
        out['requests'] = len(offered)
        out['overcommitted'] = dep.audit()['overcommitted']
        out['windows'] = _windows(scheduler.manager)
        out['lp_bound'] = fill_bound.upper_bound(
            pop.capacity, pop.used, offered, _oracle(pop).fit_mask)
    out['stranded'] = {rc: round(v, 4) for rc, v in oracle.stranded(
        _smallest()).items()}
    out['utilization'] = {rc: round(v, 4)
                          for rc, v in oracle.utilization().items()}
    out['decision_single'] = stats.summarize(times['single'])
    out['decision_gang'] = stats.summarize(times['gang'])
    return out


def _oracle(pop):
    return CapacityOracle(pop.capacity, pop.used, pop.zones, pop.min_unit,
                          pop.max_unit)


def _windows(manager):
    """Requests per window of a windowed solver: mean, and the share
    of the trace's requests their window placed (``batched``)."""
    driver = manager.driver
    window = getattr(driver, 'window', None)
    if window is None or not window.sizes:
        return None
    return {'count': len(window.sizes),
            'mean_requests': round(float(np.mean(window.sizes)), 2),
            'outcomes': dict(driver.outcomes)}


def _smallest():
    return min((workload.flavor_resources(f) for f in workload.FLAVORS),
               key=lambda r: r[rcs.MEMORY_MB])


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
    return '\n'.join((report.table(columns, rows), summary,
                      _render_drivers(result['drivers'])))


def _render_drivers(drivers):
    return report.table(
        ['driver', 'requests', 'instances placed', 'LP bound',
         'refused', 'gangs refused', 'refused, had a placement',
         'used (VCPU/RAM/disk)', 'stranded (VCPU/RAM/disk)',
         'single p50/p99 ms', 'gang p50/p99 ms'],
        [[name, r['requests'], r['instances'], r['lp_bound'],
          r['refused'], r['refused_gangs'], r['refused_placeable'],
          _triple(r['utilization']), _triple(r['stranded']),
          _p50_p99(r['decision_single']), _p50_p99(r['decision_gang'])]
         for name, r in drivers.items()])


def _p50_p99(summary):
    return '%s / %s' % (summary.get('p50'), summary.get('p99'))


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
