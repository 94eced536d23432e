"""Scenario ``providers``: a boot from volume with a port, three groups.

A fresh database holds 10k compute hosts, 2k storage backends and 2k
network segments, all reported as trackers report them (generic reports
through ``scheduler.db.providers.absorb_reports``): 500 racks of 20
compute hosts and 4 backends (half of them with ``STORAGE_DISK_SSD``), 10
racks to a row, 40 network segments per row.

An in-process manager (no RPC, ``scheduler_bench.inprocess``) then places
one instance at a time with three resource groups: the instance
(``compute``), a 100-GB SSD volume (``storage``) and a 1-Gb/s port
(``network``), the instance in the volume's rack and the port in the
volume's row (hard rules). Every request is claimed in the database.
Printed: p50/p99 of the decision (filters, groups, weighers, pick), of
the claim and of the whole call; the target is a decision p99 of 5 ms.
"""

from scheduler.service import composition
from scheduler import objects
from scheduler_bench import report
from scheduler_bench import stats
from scheduler_bench.cluster import BenchDatabase
from scheduler_bench.inprocess import TimedScheduler
from scheduler_bench.progress import Progress
from scheduler_bench import settings
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.db import providers as db_providers
from scheduler.model import resource_classes as rcs

NAME = 'providers'
COMPUTE, STORAGE, NETWORK = 10000, 2000, 2000
COMPUTE_PER_RACK, RACKS_PER_ROW = 20, 10
RATIOS = {rcs.VCPU: 4.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
BATCH = 500

TARGETS = (
    report.Target('decision p99, 3 groups, 14k providers',
                  ('decision', 'p99'), '<=', 5, 'ms'),
    report.Target('hard locality kept', ('broken_rules',), '==', 0),
)


def _reports(compute, storage, network):
    """(name, stats) of every provider, racks and rows as above."""
    racks = max(compute // COMPUTE_PER_RACK, 1)
    rows = max(racks // RACKS_PER_ROW, 1)

    def where(rack):
        return {'rack': 'rack%03d' % rack,
                'row': 'row%02d' % (rack // RACKS_PER_ROW % rows)}
    for i in range(compute):
        yield 'compute%05d' % i, {
            'vcpus': 32, 'memory_mb': 131072, 'local_gb': 1000,
            'locality': where(i % racks)}
    for i in range(storage):
        yield 'storage%04d' % i, {
            'kind': 'storage', 'locality': where(i % racks),
            'inventories': {'DISK_GB': {'total': 20000}},
            'traits': ['STORAGE_DISK_SSD'] if i % 2 == 0 else []}
    for i in range(network):
        yield 'segment%04d' % i, {
            'kind': 'network',
            'locality': {'row': 'row%02d' % (i % rows)},
            'inventories': {'NET_BW_EGR_KILOBIT_PER_SEC': {
                'total': 10 ** 7}}}


def _populate(db, options, counts):
    batch = []
    with Progress('providers: report %d providers' % sum(counts),
                  total=sum(counts), enabled=options.progress) as bar:
        for name, stats_ in _reports(*counts):
            batch.append(objects.ComputeNode.from_stats(name, name, stats_))
            if len(batch) == BATCH:
                db_providers.absorb_reports(db, batch, RATIOS)
                bar.update(len(batch))
                batch = []
        if batch:
            db_providers.absorb_reports(db, batch, RATIOS)
            bar.update(len(batch))


def request_spec():
    """The three-group boot-from-volume request with a port."""
    return objects.RequestSpec(
        num_instances=1, project_id='bench', is_bfv=True,
        flavor=objects.Flavor(vcpus=2, memory_mb=4096, root_gb=0),
        resource_groups=[
            objects.ResourceGroup(name='compute', kind='compute'),
            objects.ResourceGroup(name='volume', kind='storage',
                                  resources={'DISK_GB': 100},
                                  required_traits=['STORAGE_DISK_SSD']),
            objects.ResourceGroup(
                name='port', kind='network',
                resources={'NET_BW_EGR_KILOBIT_PER_SEC': 1000000})],
        locality=[
            objects.LocalityRule(groups=['compute', 'volume'],
                                 scope='rack', policy='same', hard=True),
            objects.LocalityRule(groups=['port', 'volume'], scope='row',
                                 policy='same', hard=True)])


def _broken(table, selection):
    """1 if the selection breaks a hard rule of ``request_spec``."""
    def label(group, key):
        row = table.hosts.index(selection.provider_for(group)[0])
        return table.attributes[row].get('locality', {}).get(key)
    return int(label('compute', 'rack') != label('volume', 'rack')
               or label('port', 'row') != label('volume', 'row'))


def _measure(options, manager, count):
    scheduler = TimedScheduler(manager)
    cold = scheduler.cold_load()
    timings, broken, refused = [], 0, 0
    with Progress('providers: place', total=count,
                  enabled=options.progress) as bar:
        for index in range(count):
            selections, timing = scheduler.select(request_spec())
            if selections is None:
                refused += 1
            else:
                timings.append(timing)
                if index % 50 == 0:  # a sample: the check is slow
                    broken += _broken(manager.host_cache.table,
                                      selections[0][0])
            bar.update()
    return {'cold_load_s': round(cold, 3),
            'decision': stats.summarize([t.decision for t in timings]),
            'claim': stats.summarize([t.claim for t in timings]),
            'in_process': stats.summarize([t.total for t in timings]),
            'no_valid_host': refused, 'broken_rules': broken}


def run(options):
    scale = options.size(COMPUTE, COMPUTE // 10) / COMPUTE
    counts = (int(COMPUTE * scale), int(STORAGE * scale),
              int(NETWORK * scale))
    result = {'scenario': NAME, 'compute': counts[0], 'storage': counts[1],
              'network': counts[2]}
    with BenchDatabase(options.db, options.db_url) as database:
        conf = settings.make_conf(settings.base_values(database.url))
        db = db_api.Database(conf)
        try:
            migration.db_sync(db)
            _populate(db, options, counts)
            manager = composition.build_manager(conf, db)
            try:
                result.update(_measure(options, manager,
                                       options.count(1000, 200)))
            finally:
                manager.stop()
        finally:
            db.dispose()
    return result


def render(result):
    rows = [[name, result[key]['count'], result[key]['p50'],
             result[key]['p99'], result[key]['max']]
            for name, key in (('decision', 'decision'), ('claim', 'claim'),
                              ('in-process call', 'in_process'))]
    return report.table(['phase', 'requests', 'p50 ms', 'p99 ms', 'max ms'],
                        rows) + (
        '\n%d compute + %d storage + %d network providers, cold load %.2fs;'
        ' NoValidHost %d; sampled hard-rule breaks %d' % (
            result['compute'], result['storage'], result['network'],
            result['cold_load_s'], result['no_valid_host'],
            result['broken_rules']))


def draw(pyplot, result):
    figure, axes = pyplot.subplots(figsize=(6, 4))
    names = ['decision', 'claim', 'in_process']
    axes.bar(names, [result[n]['p99'] for n in names])
    axes.axhline(5, color='red', linestyle='--', label='target (decision)')
    axes.set_ylabel('p99 ms')
    axes.set_title('providers: three groups, %d providers' % (
        result['compute'] + result['storage'] + result['network']))
    axes.legend(fontsize=8)
    return figure
