"""Issue 11: compute, storage and network providers placed together.

A cloud of four racks in two rows (compute hosts and a storage backend
per rack, a network segment per row) reports through tracker processes
with generic reports. Conductor threads then place, through two
``scheduler-server`` workers over RabbitMQ, until nothing fits:

* boot-from-volume instances with a port, with *hard* locality (compute in
  the volume's rack, port in the volume's row), as RequestSpec objects
  and as legacy dicts;
* the same with *soft* locality;
* volumes alone (a storage group, no instance).

Checked against the database: no provider of any kind is overcommitted;
every placement's claims are exactly the providers its Selection names;
every hard placement keeps its rules; the cloud ends full for volumes.
"""

import random
import threading
import time

import pytest
from oslo_utils import uuidutils

from scheduler import exception
from scheduler import objects
from scheduler.context import RequestContext
from tests.functional import db_state
from tests.functional import workload

RACKS = {'r1': 'w1', 'r2': 'w1', 'r3': 'w2', 'r4': 'w2'}
COMPUTE_PER_RACK = 4
CONDUCTORS = 6
TIMEOUT = 180
GROUPS = [
    {'name': 'compute', 'kind': 'compute',
     'resources': {'VCPU': 1, 'MEMORY_MB': 1024}},
    {'name': 'volume', 'kind': 'storage', 'resources': {'DISK_GB': 100}},
    {'name': 'port', 'kind': 'network',
     'resources': {'NET_BW_EGR_KILOBIT_PER_SEC': 1000}},
]
VOLUME_ALONE = [GROUPS[1]]


def _rules(hard):
    return [{'groups': ['compute', 'volume'], 'scope': 'rack',
             'policy': 'same', 'hard': hard},
            {'groups': ['port', 'volume'], 'scope': 'row',
             'policy': 'same', 'hard': hard}]


def _reports():
    reports = []
    for rack, row in sorted(RACKS.items()):
        locality = {'rack': rack, 'row': row, 'availability_zone': 'az1'}
        for i in range(COMPUTE_PER_RACK):
            reports.append(('c-%s-%d' % (rack, i), {
                'vcpus': 4, 'memory_mb': 8192, 'local_gb': 80,
                'cpu_allocation_ratio': 1.0, 'ram_allocation_ratio': 1.0,
                'locality': locality}))
        reports.append(('vol-%s' % rack, {
            'kind': 'storage', 'locality': locality,
            'inventories': {'DISK_GB': {'total': 1000}},
            'traits': ['STORAGE_DISK_SSD']}))
    for row in sorted(set(RACKS.values())):
        reports.append(('net-%s' % row, {
            'kind': 'network', 'locality': {'row': row},
            'inventories': {'NET_BW_EGR_KILOBIT_PER_SEC': {'total': 20000}}}))
    return reports


def _object_spec(groups, rules):
    return objects.RequestSpec(
        num_instances=1, project_id='project-1',
        resource_groups=[objects.ResourceGroup(**g) for g in groups],
        locality=[objects.LocalityRule(**r) for r in rules])


def _legacy_spec(groups, rules, uuid):
    return {'instance_type': {'vcpus': 1, 'memory_mb': 1024, 'root_gb': 0},
            'instance_uuids': [uuid], 'num_instances': 1,
            'resource_groups': groups, 'locality': rules}


class Placements:
    """What the conductor threads were told."""

    KINDS = ('hard', 'soft', 'volume')

    def __init__(self, client):
        self.client = client
        self.lock = threading.Lock()
        self.done = {}          # consumer -> (kind, {group: host})
        self.refused = dict.fromkeys(self.KINDS, 0)
        self.errors = []
        self.deadline = time.monotonic() + TIMEOUT

    def conductor(self, seed):
        rng = random.Random(seed)
        ctxt = RequestContext(project_id='project-1', roles=['service'])
        while time.monotonic() < self.deadline:
            with self.lock:
                open_kinds = [k for k in self.KINDS if self.refused[k] < 3]
            if not open_kinds or self.errors:
                return
            kind = rng.choice(open_kinds)
            try:
                self._one(ctxt, rng, kind)
            except exception.NoValidHost:
                with self.lock:
                    self.refused[kind] += 1
            except Exception as exc:
                with self.lock:
                    self.errors.append('%s: %r' % (kind, exc))
                return
        with self.lock:
            self.errors.append('not full after %ds' % TIMEOUT)

    def _one(self, ctxt, rng, kind):
        uuid = uuidutils.generate_uuid()
        groups = VOLUME_ALONE if kind == 'volume' else GROUPS
        rules = [] if kind == 'volume' else _rules(kind == 'hard')
        if kind != 'volume' and rng.random() < 0.5:
            result = self.client.select_destinations(
                ctxt, _legacy_spec(groups, rules, uuid))
        else:
            result = self.client.select_destinations(
                ctxt, _object_spec(groups, rules), instance_uuids=[uuid])
        [[selection]] = result
        hosts = {g['name']: selection.provider_for(g['name'])[0]
                 for g in groups}
        with self.lock:
            self.done[uuid] = (kind, hosts)


def _rack(host):
    return host.split('-')[1]


def _check_locality(done):
    """Broken hard rules, and how many soft placements kept theirs."""
    broken, soft_kept, soft = [], 0, 0
    for uuid, (kind, hosts) in done.items():
        if kind == 'volume':
            continue
        volume_rack = _rack(hosts['volume'])
        kept = (_rack(hosts['compute']) == volume_rack
                and hosts['port'] == 'net-' + RACKS[volume_rack])
        if kind == 'hard' and not kept:
            broken.append('%s: %s' % (uuid, hosts))
        if kind == 'soft':
            soft += 1
            soft_kept += kept
    return broken, soft_kept, soft


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_groups_from_several_conductors_never_overcommit(
        backend, scheduler, summary_line):
    server = scheduler(workers=2,
                       options={'filter_scheduler': {'host_subset_size': 3}})
    reports = _reports()
    workload.push_hosts(server, reports)
    run = Placements(server.client())
    elapsed = workload.run_conductors(run.conductor, CONDUCTORS,
                                      TIMEOUT + 60)

    state = db_state.read_state(server.engine)
    overcommit = db_state.overcommit(state)
    broken, soft_kept, soft = _check_locality(run.done)
    kinds = [kind for kind, _ in run.done.values()]
    summary_line(
        'providers[%s]: placements hard=%d soft=%d (same rack+row: %d) '
        'volume-only=%d, no_valid_host=%s, conflicts=%d, overcommit=%d, '
        'broken hard rules=%d, %.1fs' % (
            backend, kinds.count('hard'), soft, soft_kept,
            kinds.count('volume'), run.refused,
            server.count_in_log('Claim conflict'), len(overcommit),
            len(broken), elapsed))

    assert run.errors == []
    assert server.errors_in_log() == []
    assert overcommit == []
    assert broken == []
    assert kinds.count('hard') and soft and kinds.count('volume')
    claimed = {}
    for row in db_state.allocations(server.engine):
        claimed.setdefault(row['consumer_uuid'], set()).add(row['host'])
    assert set(claimed) == set(run.done), 'claims without placement'
    for uuid, (_, hosts) in run.done.items():
        assert claimed[uuid] == set(hosts.values()), (uuid, hosts)
    # every backend is full: 4 x 1000 GB in volumes of 100 GB
    assert len(run.done) == 40
