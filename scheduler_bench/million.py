"""Scenario ``million``: one worker's decision at 1M hosts, in memory.

No database and no RPC: the rows ``populate`` would write for a 30%-used
cluster (the same shapes, zones and tracker attributes, as JSON text) are
loaded into a worker's host cache with the cold load's columnar path
(``scheduler.host_state.bulk``), then the filter scheduler plans requests
of the usual mix with the shipped filters and weighers through its public
``FilterScheduler.plan``: preload hooks (nothing to read for these
requests), filters, weighers, pick and the tentative claim, which is
forgotten after each request (no claim is written). Reported: the
columnar load's time, what the table holds (numpy columns and strings),
the process RSS before and after (it also counts the generated rows), and
the decision latency.
"""

import sys
import time

import numpy as np

from scheduler_bench import cluster
from scheduler_bench import report
from scheduler_bench import servers
from scheduler_bench import settings
from scheduler_bench import stats
from scheduler_bench import workload
from scheduler.driver import filter_scheduler
from scheduler.host_state import bulk
from scheduler.host_state.cache import HostStateCache
from scheduler.model.request_state import RequestState
from scheduler.driver import plugins

NAME = 'million'
HOSTS, QUICK_HOSTS = 1000000, 100000
REQUESTS, QUICK_REQUESTS = 300, 100
CHUNK = 50000

TARGETS = (
    report.Target('in-memory decision p99 at 1M hosts',
                  ('at_1m', 'p99'), '<=', 40, ' ms'),
)


def _load(cache, hosts, seed):
    rng = np.random.default_rng(seed)
    fractions = np.clip(0.3 + 0.1 * rng.uniform(-1, 1, hosts), 0, 1)
    templates = cluster._templates()
    population = cluster.Population(hosts)
    now = time.time()
    providers, inventories = [], []
    for first in range(0, hosts, CHUNK):
        rows, invs, _ = cluster._rows(
            first, min(first + CHUNK, hosts), 0, None, templates, fractions,
            population)
        providers += [(p['id'], p['uuid'], p['host'], p['nodename'], 0,
                       False, p['availability_zone'], None,
                       p['attributes'], 0) for p in rows]
        inventories += [(i['provider_id'], i['resource_class'], i['total'],
                         i['reserved'], i['capacity'], i['reported_used'],
                         i['claimed'], i['min_unit'], i['max_unit'],
                         i['step_size'], i['allocation_ratio'])
                        for i in invs]
    started = time.perf_counter()
    # as a worker's cold load does (HostStateCache)
    with bulk.collector_paused():
        bulk.load(cache.table, providers, inventories)
    # every host reported just now (the ComputeFilter reads it)
    cache.table.reported_at[:hosts] = now
    return time.perf_counter() - started


def run(options):
    hosts = options.size(HOSTS, QUICK_HOSTS)
    conf = settings.make_conf(settings.base_values('sqlite://'))
    rss_before = servers.rss_mb()
    cache = HostStateCache(db=None)
    result = {'scenario': NAME, 'hosts': hosts,
              'load_s': round(_load(cache, hosts, options.seed), 2),
              'rss_before_mb': round(rss_before)}
    result['rss_mb'] = round(servers.rss_mb())
    driver = filter_scheduler.FilterScheduler(
        conf, None, cache, plugins.load_filters(conf),
        plugins.load_weighers(conf))
    mix, pool = workload.RequestMix(options.seed), workload.SpecPool()
    count = options.count(REQUESTS, QUICK_REQUESTS)
    samples = []
    for _ in range(count):
        flavor, zone = mix.next()
        request = RequestState.from_spec(pool.get(flavor, 1, zone))
        started = time.perf_counter()
        driver.plan(request, ['bench'])
        samples.append(time.perf_counter() - started)
    result['decision'] = stats.summarize(samples)
    if hosts >= HOSTS:
        result['at_1m'] = result['decision']
    result['table_mb'] = round(_table_bytes(cache.table) / 2 ** 20)
    return result


def _table_bytes(table):
    """What the host table holds: its numpy columns and its strings (the
    process RSS also counts the rows generated to load it)."""
    arrays = [table.provider_id, table.generation, table.disabled,
              table.reported_at, table.az, table.failed_builds,
              table.confirmed]
    for cols in table.resources.values():
        arrays += [getattr(cols, n) for n in cols.NAMES]
        arrays += [cols.allocation_ratio, cols.free, cols.assumed]
    strings = (table.hosts, table.nodenames, table.uuids,
               table.attributes.texts())
    return (sum(a.nbytes for a in arrays)
            + sum(sys.getsizeof(x) for column in strings for x in column))


def render(result):
    d = result['decision']
    return report.table(
        ['hosts', 'load s', 'table MB', 'process RSS MB (before)', 'n',
         'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        [[result['hosts'], result['load_s'], result['table_mb'],
          '%d (%d)' % (result['rss_mb'], result['rss_before_mb']),
          d['count'], d['p50'], d['p90'], d['p99'], d['max']]])


def draw(pyplot, result):
    figure, axis = pyplot.subplots(figsize=(5, 4))
    d = result['decision']
    axis.bar(['p50', 'p90', 'p99'], [d['p50'], d['p90'], d['p99']])
    axis.set_ylabel('ms')
    axis.set_title('decision at %d hosts (in memory)' % result['hosts'])
    return figure
