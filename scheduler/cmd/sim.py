"""``scheduler-sim``: a simulated cloud on the embedded defaults.

One process, no broker, no database server: a SQLite file and the
in-process transport. It runs the real manager and driver (as several
in-process scheduler workers sharing the database), simulated resource
trackers pushing their stats through the real ``SchedulerClient``, and
conductor threads placing instances; then prints what went where, how long
it took, and whether any host was overcommitted. Then it places
boot-from-volume instances next to storage backends in racks and prints
how many landed in the same rack as their volume
(``scheduler.cmd.sim_volumes``). Progress lines go to stderr as it runs;
its temporary directory is removed when it ends, whatever the outcome.

    scheduler-sim --hosts 40 --instances 300 --racks 8 --bfv-instances 200
"""

import argparse
import collections
import os
import random
import shutil
import sys
import tempfile
import threading
import time

from scheduler.service import composition
from scheduler.db import claims
from scheduler import conf as sched_conf
from scheduler import exception
from scheduler.service import masking
from scheduler.rpc import messaging
from scheduler import version
from scheduler.client import SchedulerClient
from scheduler.cmd import output
from scheduler.cmd import sim_volumes
from scheduler.context import RequestContext
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.db import provider_reads

FLAVORS = {
    'm1.small': {'vcpus': 1, 'memory_mb': 2048, 'root_gb': 20},
    'm1.medium': {'vcpus': 2, 'memory_mb': 4096, 'root_gb': 40},
    'm1.large': {'vcpus': 4, 'memory_mb': 8192, 'root_gb': 80},
    'm1.xlarge': {'vcpus': 8, 'memory_mb': 16384, 'root_gb': 160},
}
HOST_SHAPES = [
    {'vcpus': 16, 'memory_mb': 65536, 'local_gb': 1000},
    {'vcpus': 32, 'memory_mb': 131072, 'local_gb': 2000},
]
ZONES = ('az1', 'az2')


def _parser():
    parser = argparse.ArgumentParser(prog='scheduler-sim',
                                     description=__doc__.split('\n\n')[1])
    parser.add_argument('--version', action='version',
                        version='%(prog)s ' + version.release())
    parser.add_argument('--hosts', type=int, default=40)
    parser.add_argument('--instances', type=int, default=300)
    parser.add_argument('--conductors', type=int, default=4,
                        help='concurrent conductor threads')
    parser.add_argument('--scheduler-workers', type=int, default=2,
                        help='in-process scheduler workers')
    parser.add_argument('--db-url', help='database URL (default: a new '
                        'SQLite file in a temporary directory)')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--driver', default='filter_scheduler',
                        choices=('filter_scheduler', 'solver'),
                        help="the workers' [scheduler] driver "
                        '(doc/source/drivers.rst)')
    sim_volumes.add_arguments(parser)
    return parser


class SimulatedHost:
    """A resource tracker: what one host runs, reported via the client."""

    def __init__(self, name, shape, zone, rack):
        self.name = name
        self.shape = shape
        self.zone = zone
        self.rack = rack
        self.instances = {}
        self.lock = threading.Lock()

    def boot(self, uuid, flavor):
        with self.lock:
            self.instances[uuid] = flavor

    def stats(self):
        with self.lock:
            used = list(self.instances.values())
        return dict(self.shape, availability_zone=self.zone,
                    vcpus_used=sum(f['vcpus'] for f in used),
                    memory_mb_used=sum(f['memory_mb'] for f in used),
                    local_gb_used=sum(f['root_gb'] for f in used),
                    running_vms=len(used), hypervisor_type='QEMU',
                    locality={'rack': self.rack})

    def report(self, client, ctxt):
        client.update_resource_stats(ctxt, (self.name, self.name),
                                     self.stats())


class Simulation:

    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.conf = sched_conf.new_config()
        self.conf([], project='scheduler', default_config_files=[])
        self.tmpdir = tempfile.mkdtemp(prefix='scheduler-sim-')
        url = args.db_url or 'sqlite:///' + os.path.join(self.tmpdir,
                                                         'sim.sqlite')
        self.conf.set_override('connection', url, 'database')
        self.conf.set_override('transport_url',
                               messaging.EMBEDDED_TRANSPORT_URL)
        # kombu's in-memory transport has no heartbeats to send
        self.conf.set_override('heartbeat_timeout_threshold', 0,
                               'oslo_messaging_rabbit')
        self.conf.set_override('host_subset_size', 2, 'filter_scheduler')
        self.conf.set_override('driver', args.driver, 'scheduler')
        self.ctxt = RequestContext(project_id='demo', user_id='demo',
                                   roles=['service'])
        self.hosts = [SimulatedHost('compute%03d' % i,
                                    HOST_SHAPES[(i // 2) % len(HOST_SHAPES)],
                                    ZONES[i % len(ZONES)],
                                    sim_volumes.rack_of(i, args.racks))
                      for i in range(args.hosts)]
        self.backends = (sim_volumes.backend_reports(args.racks)
                         if args.bfv_instances else [])
        self.volume_boots = None
        self.by_name = {h.name: h for h in self.hosts}
        self.results = []
        self.results_lock = threading.Lock()

    def start(self):
        self.db = db_api.Database(self.conf)
        migration.db_sync(self.db)
        self.transport = messaging.get_transport(self.conf)
        self.managers = [composition.build_manager(
            self.conf, db_api.Database(self.conf))
            for _ in range(self.args.scheduler_workers)]
        self.servers = [messaging.get_server(self.conf, self.transport, [m],
                                             report_writer=m.report_writer,
                                             recorder=m.recorder)
                        for m in self.managers]
        for server in self.servers:
            server.start()
        self.client = SchedulerClient(self.conf, transport=self.transport)

    def report_all(self):
        for host in self.hosts:
            host.report(self.client, self.ctxt)
        for name, stats in self.backends:
            self.client.update_resource_stats(self.ctxt, (name, name), stats)

    def wait_for_hosts(self, timeout=60):
        deadline = time.monotonic() + timeout
        expected = len(self.hosts) + len(self.backends)
        while time.monotonic() < deadline:
            if len(provider_reads.list_providers(self.db)) >= expected:
                return
            time.sleep(0.05)
        raise RuntimeError('trackers did not all report within %ds' %
                           timeout)

    def _requests(self):
        placed = 0
        requests = []
        while placed < self.args.instances:
            flavor = self.rng.choice(list(FLAVORS))
            count = min(self.rng.choice([1, 1, 1, 2, 3]),
                        self.args.instances - placed)
            zone = self.rng.choice([None, None, 'az1', 'az2'])
            requests.append((flavor, count, zone))
            placed += count
        return requests

    def conductor(self, queue):
        while True:
            try:
                flavor, count, zone = queue.pop()
            except IndexError:
                return
            spec = {'instance_type': dict(FLAVORS[flavor], name=flavor),
                    'num_instances': count,
                    'instance_properties': {'availability_zone': zone,
                                            'project_id': 'demo'}}
            started = time.perf_counter()
            try:
                dests = self.client.select_destinations(self.ctxt, spec)
                outcome = [(d[0].host, d[0].instance_uuid) for d in dests]
            except exception.NoValidHost:
                outcome = None
            elapsed = time.perf_counter() - started
            for host, uuid in outcome or []:
                self.by_name[host].boot(uuid, FLAVORS[flavor])
            with self.results_lock:
                self.results.append((flavor, count, zone, outcome, elapsed))
                done = len(self.results)
            if done % _PROGRESS_EVERY == 0:
                _progress('%d requests answered' % done)

    def run(self):
        try:
            self._run()
        finally:
            shutil.rmtree(self.tmpdir, ignore_errors=True)

    def _run(self):
        self.start()
        started = time.perf_counter()
        _progress('%d trackers reporting ...' % len(self.hosts))
        self.report_all()
        self.wait_for_hosts()
        reported = time.perf_counter() - started
        _progress('placing %d instances with %d conductors ...' % (
            self.args.instances, self.args.conductors))
        queue = self._requests()
        self.rng.shuffle(queue)
        threads = [threading.Thread(target=self.conductor, args=(queue,))
                   for _ in range(self.args.conductors)]
        placing = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        placing = time.perf_counter() - placing
        if self.backends:
            _progress('placing %d boot-from-volume instances ...'
                      % self.args.bfv_instances)
            self._boot_from_volume()
        self.report_all()
        for host in self.hosts:
            self.client.sync_instance_info(self.ctxt, host.name,
                                           list(host.instances))
        time.sleep(0.5)
        self.summary(reported, placing)
        self.stop()

    def _boot_from_volume(self):
        racks = {h.name: h.rack for h in self.hosts}
        racks.update({name: stats['locality']['rack']
                      for name, stats in self.backends})
        flavor = dict(FLAVORS['m1.small'], root_gb=0)
        self.volume_boots = sim_volumes.VolumeBoots(
            self.client, self.ctxt, flavor, self.args.bfv_instances, racks)
        self.volume_boots.run(self.args.conductors, lambda s: self.by_name[
            s.host].boot(s.instance_uuid, flavor))

    def stop(self):
        for server in self.servers:
            server.stop()
        for server in self.servers:
            server.wait()
        for scheduler_manager in self.managers:
            scheduler_manager.stop()
        self.transport.cleanup()

    # -- reporting -------------------------------------------------------

    def summary(self, reported, placing):
        latencies = sorted(r[4] * 1000 for r in self.results)
        placed = sum(len(r[3]) for r in self.results if r[3])
        failed = [r for r in self.results if r[3] is None]
        print('Simulated cloud: %d hosts (%s), %d scheduler workers, %d '
              'conductors, database %s' % (
                  len(self.hosts), ', '.join(ZONES),
                  self.args.scheduler_workers, self.args.conductors,
                  masking.mask(self.conf.database.connection)))
        print('Trackers reported in %.2fs; %d requests (%d instances) '
              'placed in %.2fs: %.0f instances/s\n' % (
                  reported, len(self.results), placed, placing,
                  placed / placing if placing else 0))
        self._print_flavors(failed)
        self._print_hosts()
        print('\nselect_destinations latency (ms): p50 %.1f  p90 %.1f  '
              'p99 %.1f  max %.1f' % (
                  _pct(latencies, 50), _pct(latencies, 90),
                  _pct(latencies, 99), latencies[-1] if latencies else 0))
        if self.volume_boots is not None:
            print('\n'.join([''] + self.volume_boots.summary(
                self.args.racks)))
        conflicts = sum(m.driver.claim_conflicts for m in self.managers)
        over = self._overcommitted()
        print('Claim conflicts between workers: %d; NoValidHost: %d '
              'requests; overcommitted hosts: %d' % (
                  conflicts, len(failed), len(over)))
        if failed:
            flavor, count, zone = failed[0][:3]
            print('First NoValidHost was %d x %s in %s' % (
                count, flavor, zone or 'any zone'))
        if over:
            print('OVERCOMMITTED: %s' % ', '.join(over))
            sys.exit(1)

    def _print_flavors(self, failed):
        per = collections.defaultdict(lambda: [0, 0])
        for flavor, count, zone, outcome, _ in self.results:
            per[flavor][0 if outcome else 1] += count
        print(output.table(['flavor', 'placed', 'no valid host'],
                           [[f, per[f][0], per[f][1]] for f in FLAVORS]))

    def _print_hosts(self):
        hosts = [h for h in provider_reads.list_providers(self.db)
                 if h['kind'] == 'compute']
        by_zone = collections.defaultdict(list)
        for h in hosts:
            by_zone[h['availability_zone']].append(h)
        rows = []
        for zone, members in sorted(by_zone.items()):
            for rc in ('VCPU', 'MEMORY_MB', 'DISK_GB'):
                used = sum(max(h['inventories'][rc]['claimed'],
                               h['inventories'][rc]['reported_used'])
                           for h in members)
                cap = sum(h['inventories'][rc]['capacity'] for h in members)
                fills = [max(h['inventories'][rc]['claimed'],
                             h['inventories'][rc]['reported_used']) /
                         max(h['inventories'][rc]['capacity'], 1)
                         for h in members]
                rows.append([zone, len(members), rc, used, cap,
                             '%.0f%%' % (100.0 * used / max(cap, 1)),
                             '%.0f%%' % (100 * min(fills)),
                             '%.0f%%' % (100 * max(fills))])
        print(output.table(['zone', 'hosts', 'resource', 'used', 'capacity',
                            'fill', 'emptiest host', 'fullest host'], rows))
        per_host = collections.Counter(
            a['host'] for a in claims.list_allocations(self.db)
            if a['resource_class'] == 'VCPU')
        counts = sorted(per_host.get(h.name, 0) for h in self.hosts)
        print('Instances per host: min %d, median %d, max %d' % (
            counts[0], counts[len(counts) // 2], counts[-1]))
        print('(The default weighers spread by absolute free RAM, CPU and '
              'disk: the %d-GiB hosts take instances until their free RAM '
              'falls to the level of the %d-GiB ones.)' % (
                  max(s['memory_mb'] for s in HOST_SHAPES) // 1024,
                  min(s['memory_mb'] for s in HOST_SHAPES) // 1024))

    def _overcommitted(self):
        bad = []
        for h in provider_reads.list_providers(self.db):
            for rc, inv in h['inventories'].items():
                if max(inv['claimed'], inv['reported_used']) > \
                        inv['capacity']:
                    bad.append('%s/%s' % (h['host'], rc))
        return bad


# a progress line every this many answered requests
_PROGRESS_EVERY = 50


def _progress(text):
    """One line on stderr while the simulation runs (the summary goes to
    stdout at the end)."""
    print('scheduler-sim: %s' % text, file=sys.stderr, flush=True)


def _pct(values, pct):
    if not values:
        return 0.0
    index = min(len(values) - 1, int(round(pct / 100.0 * (len(values) - 1))))
    return values[index]


def main(argv=None):
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.hosts < 1 or args.instances < 1 or args.racks < 1 or \
            args.bfv_instances < 0:
        print('scheduler-sim: --hosts, --instances and --racks must be '
              'positive, --bfv-instances not negative',
              file=sys.stderr)
        return 2
    Simulation(args).run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
