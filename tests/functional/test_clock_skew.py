"""Issue 38: scheduler hosts whose clocks differ by the allowed skew
(``SKEW`` seconds; doc/source/admin/production.rst, "Clocks").

Two scheduler-server processes share one database, each on a topic of
its own, so that the test chooses which one handles a message: A on this
machine's clock, B under libfaketime ``SKEW`` seconds behind (its
monotonic clock left alone). A tracker with a correct clock reports a
host through A, then the same host, changed, through B. The later report
must win: B orders it by the database's clock (``scheduler.db.clock``).
On its own clock, B clamped the report's send time to its "now", 5 s in
the past, below the time of the report A had stored, and dropped it as
older: a report acknowledged and lost. The same for instances: an
instance reported through A, then deleted through B.

Both workers read up meanwhile (``scheduler-manage service list``'s
records: their heartbeats, on their own clocks, are compared with a
margin of ``[DEFAULT] worker_down_time``, 60 s). A host whose clock is
further off than allowed says so in its log.
"""

import glob
import time
import uuid

import pytest
import sqlalchemy as sa

from scheduler import conf as sched_conf
from scheduler import objects
from scheduler.client import SchedulerClient
from scheduler.db import api as db_api
from scheduler.db import models
from scheduler.db import services as db_services
from tests import waiting
from tests.functional import db_state
from tests.functional import server as server_mod
from tests.functional import services
from tests.functional import workload

#: seconds host B's clock runs behind
SKEW = 5
#: libfaketime, multi-threaded (Debian's libfaketime package)
LIBFAKETIME = '/usr/lib/*/faketime/libfaketimeMT.so.1'


def _skewed_by(seconds):
    """The command prefix that runs a process with its wall clock
    ``seconds`` off (negative: behind), its monotonic clock left alone;
    ``env`` execs, so the process is the one a test signals."""
    libraries = glob.glob(LIBFAKETIME)
    services.require_here(
        None if libraries else '%s not found (install faketime)'
        % LIBFAKETIME, 'a skewed clock (libfaketime)')
    return ('env', 'LD_PRELOAD=%s' % libraries[0],
            'FAKETIME=%+d' % seconds, 'FAKETIME_DONT_FAKE_MONOTONIC=1')


@pytest.fixture
def skewed_hosts(rabbitmq, database_url, tmp_path, request):
    prefix = _skewed_by(-SKEW)
    a = server_mod.SchedulerServer(tmp_path / 'a', database_url, 1,
                                   {'DEFAULT': {'host': 'host-a'}})
    b = server_mod.SchedulerServer(tmp_path / 'b', database_url, 1,
                                   {'DEFAULT': {'host': 'host-b'}})
    b.prefix = prefix
    try:
        a.db_sync()
        for server in (a, b):
            server.start().wait_ready()
        yield a, b
    finally:
        failed = getattr(request.node, 'report_call', None)
        for server in (a, b):
            server.close()
            if failed is not None and failed.failed:
                print(server.tail())


def _vcpus_used(server, host):
    for provider in db_state.read_state(server.engine).values():
        if provider.host == host:
            return provider.inventories['VCPU'].reported_used
    return None


@pytest.mark.parametrize('backend', ['postgresql', 'mariadb'])
def test_a_report_through_a_host_behind_is_not_lost(skewed_hosts,
                                                    summary_line):
    a, b = skewed_hosts
    [(host, stats)] = workload.host_reports(1, prefix='skewed')
    ctxt = workload.context()
    # one tracker, sending through A then B within a second (well within
    # the skew): the second report's send time lies above the first's
    clients = [SchedulerClient(server.conf()) for server in (a, b)]
    try:
        clients[0].update_resource_stats(ctxt, host,
                                         dict(stats, vcpus_used=1))
        waiting.wait_for(lambda: _vcpus_used(a, host) == 1, 30,
                         'the first report stored')
        sent = time.monotonic()
        clients[1].update_resource_stats(ctxt, host,
                                         dict(stats, vcpus_used=2))
        waiting.wait_for(
            lambda: _vcpus_used(a, host) == 2, 10,
            'the later report, through the host %d s behind, stored'
            % SKEW)
    finally:
        for client in clients:
            client.close()
    summary_line('clock skew: a report through a host %d s behind, sent '
                 'after one through a correct host: stored %.1f s after '
                 'it was sent' % (SKEW, time.monotonic() - sent))
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('connection', a.db_url, 'database')
    db = db_api.Database(conf)
    try:
        listed = db_services.list_services(db, 60)
    finally:
        db.dispose()
    assert sorted(s['host'] for s in listed if s['up']) == [
        'host-a', 'host-b']


def _instances_of(server, host):
    table = models.instances
    with server.engine.connect() as connection:
        return set(connection.execute(sa.select(table.c.uuid).where(
            table.c.host == host, sa.not_(table.c.deleted))).scalars())


@pytest.mark.parametrize('backend', ['postgresql'])
def test_a_delete_through_a_host_behind_is_not_lost(skewed_hosts):
    a, b = skewed_hosts
    ctxt = workload.context()
    instance = objects.InstanceInfo(uuid=str(uuid.uuid4()))
    clients = [SchedulerClient(server.conf()) for server in (a, b)]
    try:
        clients[0].update_instance_info(ctxt, 'skewed-host', [instance])
        waiting.wait_for(
            lambda: instance.uuid in _instances_of(a, 'skewed-host'), 30,
            'the instance stored')
        clients[1].delete_instance_info(ctxt, 'skewed-host', instance.uuid)
        waiting.wait_for(
            lambda: instance.uuid not in _instances_of(a, 'skewed-host'),
            10, 'the delete through the host %d s behind applied' % SKEW)
    finally:
        for client in clients:
            client.close()


@pytest.mark.parametrize('backend', ['postgresql'])
def test_a_host_further_off_says_so(rabbitmq, database_url, tmp_path):
    server = server_mod.SchedulerServer(tmp_path / 'far', database_url, 1,
                                        {'DEFAULT': {'host': 'host-far'}})
    server.prefix = _skewed_by(-3 * SKEW)
    try:
        server.db_sync()
        server.start().wait_ready()
        waiting.wait_for(
            lambda: server.count_in_log('s behind the database server'),
            30, 'the warning of a clock %d s behind' % (3 * SKEW))
        [line] = server.lines_with('s behind the database server')
        assert 'clock is %d.' % (3 * SKEW) in line or (
            'clock is %d.9' % (3 * SKEW - 1) in line), line
    finally:
        server.close()
