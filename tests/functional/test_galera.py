"""Issue 38: workers writing through different nodes of a Galera cluster
never hand out the same capacity twice.

Galera replicates by certification: two workers writing through two
nodes never wait for each other's row locks; the loser of a conflict
learns it at COMMIT, as a deadlock (1213), and its claim is retried
(``scheduler.db.api.retry_on_deadlock``) on the capacity the winner
left. The race of ``test_race`` runs here on a private three-node
cluster (``galera_cluster``), multi-writer: three scheduler-servers
(2 + 1 + 1 workers) on one topic, each writing through its own node.
Checked against the cluster (read with ``wsrep_sync_wait``, so that
every committed write is seen):

* claims on every host never exceed its capacity;
* every NoValidHost is confirmed by the offline oracle of ``test_race``;
* at the end no host has room for any flavor; every claim belongs to a
  placement a conductor was told about, on the host it was told;
* no error in any server's log: certification failures are retried,
  never returned.
"""

import time
import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy import pool

from tests.functional import db_state
from tests.functional import fault_load
from tests.functional import galera_cluster
from tests.functional import haproxy_front
from tests.functional import server as server_mod
from tests.functional import services
from tests.functional import test_race
from tests.functional import workload

# one cluster fault test at a time (tests/functional/conftest.py)
pytestmark = pytest.mark.usefixtures('one_cluster_fault_at_a_time')

# workers of each scheduler host, one host per Galera node
WORKERS = (2, 1, 1)


@pytest.fixture(scope='module')
def galera():
    galera_cluster.require()
    with services.one_cluster(), galera_cluster.running() as cluster:
        yield cluster


class _Audited(server_mod.SchedulerServer):
    """A scheduler host whose audit reads wait for the cluster's
    committed writes (``wsrep_sync_wait``)."""

    @property
    def engine(self):
        if self._engine is None:
            self._engine = sa.create_engine(
                self.db_url, poolclass=pool.NullPool,
                connect_args={
                    'init_command': 'SET SESSION wsrep_sync_wait = 1'})
        return self._engine


@pytest.fixture
def hosts(galera, rabbitmq, tmp_path, request):
    """Start one scheduler host per Galera node, on one topic, each on a
    database of its own test (created through node 0)."""
    name = 'race_%s' % uuid.uuid4().hex[:8]
    admin = sa.create_engine(galera.nodes[0].url('mysql'),
                             poolclass=pool.NullPool)
    with admin.begin() as conn:
        conn.exec_driver_sql('CREATE DATABASE %s' % name)
    topic = 'sched-galera-%s' % uuid.uuid4().hex
    servers = [
        _Audited(tmp_path / ('host-%d' % index),
                 galera.nodes[index].url(name), workers,
                 {'DEFAULT': {'host': 'galera-host-%d' % index},
                  'scheduler': {'topic': topic},
                  'filter_scheduler': {'host_subset_size': 3}})
        for index, workers in enumerate(WORKERS)]
    servers[0].db_sync()
    try:
        for server in servers:
            server.start()
        for server in servers:
            server.wait_ready()
        yield servers
    finally:
        failed = getattr(request.node, 'report_call', None)
        for server in servers:
            server.close()
            if failed is not None and failed.failed:
                print(server.tail())
        with admin.begin() as conn:
            conn.exec_driver_sql('DROP DATABASE %s' % name)
        admin.dispose()


def _aborts(galera):
    """Transactions the cluster aborted so far, over its nodes:
    certification failures and brute-force aborts."""
    return sum(int(node.status(name) or 0) for node in galera.nodes
               for name in ('wsrep_local_cert_failures',
                            'wsrep_local_bf_aborts'))


def test_multi_writer_fill_never_overcommits(galera, hosts, summary_line):
    first = hosts[0]
    aborted_before = _aborts(galera)
    workload.push_hosts(first, [('race-%02d' % i, dict(test_race.HOST_STATS))
                                for i in range(test_race.HOSTS)])
    fill = test_race.Fill(first, first.client())
    elapsed = workload.run_conductors(fill.conductor, test_race.CONDUCTORS,
                                      test_race.FILL_TIMEOUT + 60)

    state = db_state.read_state(first.engine)
    overcommit = db_state.overcommit(state)
    conflicts = sum(s.count_in_log('Claim conflict') for s in hosts)
    aborted = _aborts(galera) - aborted_before
    summary_line(
        'galera multi-writer race: %s workers on 3 nodes, %d conductors, '
        'placements=%d, conflicts=%d, certification aborts=%d, '
        'no_valid_host=%d '
        '(%d as the last room was taken), false_no_valid_host=%d, '
        'overcommit=%d, %.1fs'
        % ('+'.join(map(str, WORKERS)), test_race.CONDUCTORS,
           len(fill.placements), conflicts, aborted, fill.no_valid_host,
           fill.lost_last_room, len(fill.false_no_valid_host),
           len(overcommit), elapsed))

    assert fill.errors == []
    for server in hosts:
        assert server.errors_in_log() == []
    assert overcommit == []
    assert fill.false_no_valid_host == []
    for flavor in test_race.FLAVORS:
        room = db_state.hosts_that_fit(state, db_state.resources_of(flavor))
        assert room == [], '%s still fits on %s' % (flavor['name'], room)
    claimed = {}
    for row in db_state.allocations(first.engine):
        claimed.setdefault(row['consumer_uuid'], set()).add(row['host'])
    assert set(claimed) == set(fill.placements), 'claims without placement'
    for consumer, (flavor, host) in fill.placements.items():
        assert claimed[consumer] == {host}, (consumer, host,
                                             claimed[consumer])


# -- faults behind HAProxy (one writer, two backups) -------------------

#: the longest a caller may wait, and the longest placements may stall
LONGEST = 10.0
#: reports of new hosts a tracker sends while a node is down
REPORTS = 300


@pytest.fixture
def behind_haproxy(galera, rabbitmq, tmp_path, request):
    """One scheduler host (2 workers) on the cluster through HAProxy, as
    kolla deploys it; every node up and HAProxy's writer node0 again
    afterwards, for the next test."""
    haproxy_front.require()
    name = 'fault_%s' % uuid.uuid4().hex[:8]
    admin = sa.create_engine(galera.nodes[1].url('mysql'),
                             poolclass=pool.NullPool)
    with admin.begin() as conn:
        conn.exec_driver_sql('CREATE DATABASE %s' % name)
    server = None
    try:
        with haproxy_front.running(galera, tmp_path / 'haproxy') as front:
            server = _Audited(tmp_path / 'scheduler', front.url(name), 2)
            server.db_sync()
            server.start().wait_ready()
            yield front, server
    finally:
        if server is not None:
            server.close()
            failed = getattr(request.node, 'report_call', None)
            if failed is not None and failed.failed:
                print(server.tail())
                print(galera.tail())
        for node in galera.nodes:
            if node.process.poll() is not None:
                node.start()
        for node in galera.nodes:
            node.wait_synced(len(galera.nodes))
        with admin.begin() as conn:
            conn.exec_driver_sql('DROP DATABASE %s' % name)
        admin.dispose()


def _until(predicate, timeout):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.2)


@pytest.mark.parametrize('victim', ['backup', 'writer'])
def test_a_galera_node_killed_under_load(galera, behind_haproxy, victim,
                                         summary_line):
    """SIGKILL a node under load (a backup, or the node HAProxy writes
    to, whose sessions HAProxy then cuts and sends to a backup), bring
    it back, while a tracker reports new hosts: every call answered (a
    placement, or a clear "retry"), none longer than 10 s, placements
    never stalled 10 s, every report stored, the node back in the
    cluster, and the audit clean."""
    front, server = behind_haproxy
    node = galera.nodes[0 if victim == 'writer' else 2]
    workload.push_hosts(server, workload.host_reports(fault_load.HOSTS))
    reports = fault_load.Reports(server, REPORTS, prefix='node-down')
    with fault_load.Load(server, threads=4) as load:
        time.sleep(2)
        node.kill()
        killed = time.monotonic()
        reports.start()
        if victim == 'writer':
            _until(lambda: front.writer() not in (None, 0), 10)
        switched = time.monotonic() - killed
        time.sleep(3)
        node.start()
        node.wait_synced(len(galera.nodes))
        rejoined = time.monotonic() - killed
        _until(lambda: front.writer() == 0, 15)
        time.sleep(2)
        reports.join()
    problems = fault_load.audit(server, load)
    stored = reports.stored()
    summary_line(
        'galera: %s node killed behind HAProxy: %s; writer moved in %.1f s, '
        'node synced again after %.1f s; longest wait %.1f s, longest '
        'stall %.1f s; audit problems %d; reports sent meanwhile %d, '
        'stored %d' % (
            victim, load.counts(), switched, rejoined, load.longest_wait,
            load.longest_stall(), len(problems), REPORTS, stored))
    assert load.unexpected() == []
    assert load.longest_wait <= LONGEST
    assert load.longest_stall() <= LONGEST
    assert problems == []
    assert stored == REPORTS
    assert 'Traceback' not in server.log_text(), server.errors_in_log(
        limit=10)
    server.assert_alive()
