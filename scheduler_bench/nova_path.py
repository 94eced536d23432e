"""Scenario ``nova_path``: nova 34's scheduler path against this one.

One real Placement 16 (``placement_server``: ``wsgiref``, one thread,
SQLite) holds N compute nodes (1,000 by default, 100 with ``--quick``),
created through its REST API as nova-computes create them, four clients
at a time. On those same providers, ``--requests`` boots (200; 30 with
``--quick``) of one flavor (1 VCPU, 512 MB, 1 GB), one at a time, each
timed from nova's side (``tests/functional/nova_driver.py`` in the nova
venv ``.nova-venv``, nova 34.0.0):

* ``placement alone``: what nova 34's own scheduler asks of Placement
  for a boot, with nova's own code: its request filters,
  ``GET /allocation_candidates`` (``limit=1000``, microversion 1.36),
  then ``claim_resources`` (``GET`` and ``PUT /allocations/{uuid}``,
  ``consumer_generation`` null) of the candidate whose provider has the
  most free memory. Nova's host filters and weighers, which read the cell
  database, are not run: a lower bound of nova's own path;
* ``write-back``: nova's unmodified ``SchedulerQueryClient`` at RPC 4.5
  (``return_objects``, ``return_alternates``: nova 34's conductor) calling
  a ``scheduler-server`` with ``[nova] enabled`` and ``placement_write_
  back`` on, fed by ``scheduler-placement-feed`` (running, 10 s
  interval) from the same Placement: the claim in the scheduler's
  database, then the allocation written to Placement before the answer;
* ``no write-back``: the same with ``placement_write_back`` off.

The first ``WARMUP`` calls of each series are not counted. Printed:
p50, p99, mean and max of each series, and each series' p50 and mean
over Placement alone's. Needs RabbitMQ and the nova venv with
``openstack-placement`` (``.ci/run`` builds it). Nova's client sends to
the queue ``scheduler`` of the broker's vhost, whatever the exchange: run
it while no other ``[nova] enabled`` scheduler consumes that queue on the
same vhost (e.g. the functional tests of ``test_nova_*``).
"""

import json
import os
import pathlib
import subprocess
import sys
import time

import sqlalchemy as sa

from scheduler.db import models
from scheduler_bench import placement_server
from scheduler_bench import report
from scheduler_bench import settings
from scheduler_bench import stats
from scheduler_bench.deployment import Deployment
from scheduler_bench.progress import Progress

NAME = 'nova_path'
DRIVER = placement_server.ROOT / 'tests' / 'functional' / 'nova_driver.py'
FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 1}
CELL = 'c0ffee00-0000-4000-8000-000000000001'
WARMUP = 10
FEED_INTERVAL = 10
SERIES = ('placement alone', 'write-back', 'no write-back')

TARGETS = ()


def _nova(placement, exchange, case, count):
    """Run one timed case in nova's venv; its seconds, warm-up dropped."""
    case = dict(case, name=case['call'], pin='4.5', flavor=FLAVOR,
                count=WARMUP + count)
    done = subprocess.run(
        [str(placement_server.VENV / 'python'), str(DRIVER),
         settings.RABBIT_URL, exchange, json.dumps([case]), placement.url],
        cwd=str(DRIVER.parent), capture_output=True, text=True,
        timeout=60 + 10 * count)
    if done.returncode != 0:
        raise RuntimeError('nova_driver.py failed:\n%s' % (
            done.stdout + done.stderr)[-3000:])
    [answer] = [json.loads(line) for line in done.stdout.splitlines()
                if line.startswith('{')]
    if 'error' in answer:
        raise RuntimeError('nova_driver.py: %s' % answer['error'])
    return answer['seconds'][WARMUP:]


def _feed_options(placement):
    return {'placement_feed': {'auth_type': 'admin_token',
                               'endpoint': placement.url, 'token': 'admin',
                               'interval': FEED_INTERVAL,
                               'push_aggregates': False}}


def _provider_count(dep):
    with dep.db.engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(
            models.providers)).scalar_one()


def _wait_fed(dep, server, count, timeout):
    """Until the feed ended its first cycle (it logs to the server's log)
    and ``count`` providers are stored."""
    deadline = time.monotonic() + timeout
    while not (server.log_count('placement feed cycle:')
               and _provider_count(dep) >= count):
        if time.monotonic() > deadline:
            raise RuntimeError('the feed stored %d of %d providers in %ds'
                               % (_provider_count(dep), count, timeout))
        time.sleep(0.5)


def _stop(process):
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:   # in a long cycle
        process.kill()
        process.wait()


def _through_scheduler(dep, placement, providers, count, write_back):
    exchange = 'nova-path-%s' % settings.unique_topic()
    extra = dict(_feed_options(placement), nova={
        'enabled': True, 'cell_uuid': CELL, 'exchange': exchange,
        'placement_write_back': write_back},
        # nova's topic queue, 'scheduler', is one per vhost whatever the
        # exchange, and others declare it durable
        oslo_messaging_rabbit={'amqp_auto_delete': False,
                               'rabbit_transient_queues_ttl': 60})
    with dep.server(workers=2, extra=extra) as server:
        feed = subprocess.Popen(
            [sys.executable, '-m', 'scheduler.cmd.placement_feed',
             '--config-file', server.config_path],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_fed(dep, server, providers, 120 + providers // 5)
            return _nova(placement, exchange, {
                'call': 'timed_select', 'return_objects': True,
                'return_alternates': True}, count)
        finally:
            _stop(feed)


def run(options):
    providers = options.size(1000, 100)
    count = options.count(200, 30)
    if placement_server.placement_python() is None:
        raise RuntimeError('nova_path needs nova 34 and placement 16 in %s'
                           % placement_server.VENV.parent)
    workdir = pathlib.Path(options.workdir) / NAME
    os.makedirs(workdir, exist_ok=True)
    with placement_server.running(workdir) as placement:
        started = time.perf_counter()
        with Progress('nova_path: %d providers in Placement' % providers,
                      total=providers, enabled=options.progress) as bar:
            placement_server.add_computes(
                placement, ['nova-path-%05d' % i for i in range(providers)],
                progress=bar)
        populated = time.perf_counter() - started
        seconds = {SERIES[0]: _nova(placement, 'unused', {
            'call': 'timed_placement'}, count)}
        with Deployment(options, hosts=0, label=NAME) as dep:
            for name, write_back in zip(SERIES[1:], (True, False)):
                seconds[name] = _through_scheduler(
                    dep, placement, providers, count, write_back)
    return _result(providers, count, populated, seconds)


def _result(providers, count, populated, seconds):
    series = {name: stats.summarize(values)
              for name, values in seconds.items()}
    alone = series[SERIES[0]]
    for summary in series.values():
        summary['p50_ratio'] = round(summary['p50'] / alone['p50'], 2)
        summary['mean_ratio'] = round(summary['mean'] / alone['mean'], 2)
    return {'providers': providers, 'requests': count,
            'populate_seconds': round(populated, 1), 'series': series}


def render(result):
    columns = ['path', 'requests', 'p50 ms', 'p99 ms', 'mean ms', 'max ms',
               'p50 / alone', 'mean / alone']
    rows = [[name, s['count'], s['p50'], s['p99'], s['mean'], s['max'],
             s['p50_ratio'], s['mean_ratio']]
            for name, s in result['series'].items()]
    return report.table(columns, rows) + (
        '\n%d providers in Placement 16 (created in %.0f s), flavor '
        '1 VCPU / 512 MB / 1 GB, one request at a time' % (
            result['providers'], result['populate_seconds']))


def draw(pyplot, result):
    figure, axes = pyplot.subplots(figsize=(6, 4))
    names = list(result['series'])
    axes.bar(names, [result['series'][n]['p50'] for n in names],
             label='p50')
    axes.set_ylabel('ms')
    axes.set_title('nova_path: select_destinations, %d providers'
                   % result['providers'])
    return figure
