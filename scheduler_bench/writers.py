"""Scenario ``writers``: concurrent writers on the database, in process.

Measures the write path alone (no RPC, no planning), the figures that
argue for the change feed's design (doc/source/performance-history.rst):

* ``claims``: THREADS threads in PROCESSES processes (so that no one
  interpreter's lock bounds them) claim 1 VCPU on random providers of a
  1k-host cluster, back to back, first with the striped feed, then with
  ``[database] legacy_change_counter`` (every write also bumps the
  previous release's single counter row, as every write did before);
* ``reports``: batches of BATCH tracker reports absorbed by
  ``record_compute_nodes``, once repeating what is stored (no write),
  once with usage changed (written).

No target of its own: ``storm``, ``steady`` and ``churn`` carry them.
"""

import random
import threading
import time

from oslo_utils import uuidutils

from scheduler.db import claims
from scheduler import objects
from scheduler_bench import conductors
from scheduler_bench import report
from scheduler_bench import settings
from scheduler_bench import stats
from scheduler_bench import workload
from scheduler_bench.deployment import Deployment
from scheduler.db import api as db_api
from scheduler.db import providers as db_providers

NAME = 'writers'
HOSTS = 1000
THREADS = 8
PROCESSES = 2
SECONDS, QUICK_SECONDS = 5.0, 1.5
BATCH = 50
RATIOS = {'VCPU': 4.0, 'MEMORY_MB': 1.0, 'DISK_GB': 1.0}

TARGETS = ()


def _claimer(db, provider_ids, seed, deadline, samples):
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        started = time.monotonic()
        claims.claim_resources(db, [claims.Claim(
            uuidutils.generate_uuid(), rng.choice(provider_ids),
            {'VCPU': 1})])
        samples.append(time.monotonic() - started)


def _claim_process(values, seconds, legacy, ready, go, start_at, results):
    """One writer process (its own interpreter, its own pool)."""
    db = db_api.Database(settings.make_conf(values))
    db.legacy_change_counter = legacy
    provider_ids = list(range(1, HOSTS + 1))
    samples = []
    ready.put(0)
    go.wait()
    time.sleep(max(0.0, start_at.value - time.time()))
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=_claimer, args=(
        db, provider_ids, seed, deadline, samples))
        for seed in range(THREADS // PROCESSES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    db.dispose()
    results.put(samples)


def _claims(dep, seconds, legacy):
    with conductors.ProcessGroup(_claim_process, [
            (dep.values, seconds, legacy)] * PROCESSES) as group:
        group.wait_ready()
        group.go()
        samples = [s for r in group.results(seconds + 120) for s in r]
    return {'claims_per_s': round(len(samples) / seconds, 1),
            'latency': stats.summarize(samples)}


def _node(index, used, beat):
    vcpus, memory_mb, local_gb = workload.shape_of(index)
    return objects.ComputeNode.from_stats(
        workload.host_name(index), workload.host_name(index), {
            'vcpus': vcpus, 'memory_mb': memory_mb, 'local_gb': local_gb,
            'vcpus_used': used, 'updated_at': '2030-01-01T00:00:%02dZ' %
            beat})


def _reports(db, rounds):
    """Seconds per batch: unchanged reports, then changed ones."""
    batches = [list(range(i, i + BATCH)) for i in range(0, HOSTS, BATCH)]
    batches = batches[:rounds]
    for batch in batches:  # a first report of every host, with usage 1
        db_providers.record_compute_nodes(
            db, [_node(i, 1, 1) for i in batch], RATIOS, fresh_for=3600)
    timings = {}
    for label, used, beat in (('unchanged', 1, 2), ('changed', 2, 3)):
        samples = []
        for batch in batches:
            started = time.monotonic()
            db_providers.record_compute_nodes(
                db, [_node(i, used, beat) for i in batch], RATIOS,
                fresh_for=3600)
            samples.append(time.monotonic() - started)
        timings[label] = {
            'reports_per_s': round(BATCH * len(samples) / sum(samples), 1),
            'batch': stats.summarize(samples)}
    return timings


def run(options):
    seconds = options.pick(SECONDS, QUICK_SECONDS)
    result = {'scenario': NAME, 'hosts': HOSTS, 'threads': THREADS,
              'batch': BATCH}
    with Deployment(options, HOSTS, label='writers') as dep:
        result['striped'] = _claims(dep, seconds, legacy=False)
        result['legacy_counter'] = _claims(dep, seconds, legacy=True)
        result['reports'] = _reports(dep.db, options.pick(20, 5))
        result['overcommitted'] = dep.audit()['overcommitted']
    return result


def render(result):
    rows = [[label, result[key]['claims_per_s'],
             result[key]['latency']['p50'], result[key]['latency']['p99']]
            for label, key in (('striped feed', 'striped'),
                               ('+ legacy counter row', 'legacy_counter'))]
    claims_table = report.table(
        ['%d claim threads, %d processes' % (result['threads'],
                                             PROCESSES),
         'claims/s', 'p50 ms',
         'p99 ms'], rows)
    reports = result['reports']
    reports_table = report.table(
        ['batches of %d reports' % result['batch'], 'reports/s',
         'batch p50 ms'],
        [[label, reports[label]['reports_per_s'],
          reports[label]['batch']['p50']]
         for label in ('unchanged', 'changed')])
    return claims_table + '\n' + reports_table


def draw(pyplot, result):
    figure, axis = pyplot.subplots(figsize=(5, 4))
    axis.bar(['striped', 'legacy counter'],
             [result['striped']['claims_per_s'],
              result['legacy_counter']['claims_per_s']])
    axis.set_ylabel('claims/s')
    axis.set_title('writers: %d threads' % result['threads'])
    return figure
