"""Rolling upgrades: the previous release and the current code together.

Real processes on RabbitMQ and PostgreSQL. The previous release
(``previous_release.PREVIOUS_RELEASE``) runs from its own virtualenv;
its conductors and trackers are ``upgrade_actor.py`` run by its python.
Every test fills a small cluster until NoValidHost and then checks, in
the database, that nothing is overcommitted, that every placement is
claimed exactly once on the host it was given, and that the cluster is
really full (no slot left unused by a false NoValidHost).
"""

import json
import subprocess
import sys
import threading

import kombu
import pytest
from oslo_utils import uuidutils

from scheduler import exception
from scheduler.client import rpcapi
from scheduler.client import SchedulerClient
from tests.functional import db_state
from tests.functional import previous_release
from tests.functional import shared_broker
from tests.functional import workload
from tests.unit.objects import samples

ON_POSTGRESQL = pytest.mark.parametrize('backend', ['postgresql'])

HOSTS = 4
HOST_STATS = {'vcpus': 8, 'memory_mb': 16384, 'local_gb': 400,
              'vcpus_used': 0, 'memory_mb_used': 0, 'local_gb_used': 0,
              'cpu_allocation_ratio': 1.0, 'ram_allocation_ratio': 1.0,
              'disk_allocation_ratio': 1.0, 'availability_zone': 'az1'}
FLAVOR = {'name': 'm1', 'vcpus': 1, 'memory_mb': 2048, 'root_gb': 20}
SLOTS = HOSTS * 8  # vCPU and RAM both allow 8 per host
# a worker older than RPC 1.3 (release 0.1.0) answers get_service_versions
# with this error; the previous release (0.3.0) serves it
OLD_WORKER_ANSWER = 'UnsupportedVersion'


@pytest.fixture(scope='module')
def previous_python():
    return previous_release.install()


@pytest.fixture
def previous_scheduler(request, tmp_path, rabbitmq, database_url,
                       previous_python):
    """Factory like ``scheduler``, for the previous release's server."""
    servers = []

    def start(workers=2, options=None, sync=True):
        workdir = tmp_path / ('previous-%d' % len(servers))
        server = previous_release.PreviousServer(
            previous_python, workdir, database_url, workers, options)
        servers.append(server)
        if sync:
            server.db_sync()
        return server.start().wait_ready()

    yield start
    failed = getattr(request.node, 'report_call', None)
    for server in servers:
        server.close()
        if failed is not None and failed.failed:
            print(server.tail())


def _hosts():
    return [('upg-%02d' % i, dict(HOST_STATS)) for i in range(HOSTS)]


def _write(server, name, data):
    path = server.workdir / name
    path.write_text(json.dumps(data))
    return str(path)


def _actor(python, server, *args):
    return previous_release.start_actor(python, server, *args)


def _report(python, server):
    process = _actor(python, server, 'report',
                     _write(server, 'hosts.json', _hosts()))
    previous_release.finish_actor(process)
    db_state.wait_for(
        lambda: db_state.provider_count(server.engine) >= HOSTS, 60,
        '%d hosts stored' % HOSTS)


def _place_with_client(client, count):
    """Place one instance at a time with a current-release client."""
    placed = []
    for _ in range(count):
        uuid = uuidutils.generate_uuid()
        try:
            [[chosen]] = client.select_destinations(
                workload.context(),
                workload.legacy_spec(FLAVOR, [uuid]),
                filter_properties={}, instance_uuids=[uuid])
        except exception.NoValidHost:
            break
        placed.append({'uuid': uuid, 'host': chosen.host})
    return placed


def _errors_but_old_worker_answers(server):
    """ERROR lines of ``server``'s log, leaving out the traceback an old
    worker logs when it refuses get_service_versions (one message logged
    as several lines that share time, pid and logger)."""
    blocks = {}
    for line in server.errors_in_log(limit=10000):
        blocks.setdefault(tuple(line.split()[:5]), []).append(line)
    return [line for lines in blocks.values()
            if not any(OLD_WORKER_ANSWER in line for line in lines)
            for line in lines]


def _placements(lines):
    return [line for line in lines if 'uuid' in line]


def _check_placements(server, placements, full=True):
    """No overcommit; each placement claimed once, on its host."""
    state = db_state.read_state(server.engine)
    assert db_state.overcommit(state) == []
    claimed = {}
    for row in db_state.allocations(server.engine):
        claimed.setdefault(row['consumer_uuid'], set()).add(row['host'])
    by_uuid = {p['uuid']: p['host'] for p in placements}
    assert len(by_uuid) == len(placements), 'a UUID placed twice'
    assert set(claimed) == set(by_uuid), 'claims without a placement'
    for uuid, host in by_uuid.items():
        assert claimed[uuid] == {host}, (uuid, host, claimed[uuid])
    if full:
        assert len(placements) == SLOTS
        assert db_state.hosts_that_fit(
            state, db_state.resources_of(FLAVOR)) == []


def _client(server, cap):
    """A current-release client of ``server`` with ``[upgrade_levels]
    scheduler = cap``."""
    conf = server.conf()
    client = SchedulerClient(conf)
    conf.set_override('scheduler', cap, 'upgrade_levels')
    client.close()
    client = SchedulerClient(conf)
    server._clients.append(client)
    return client


@ON_POSTGRESQL
def test_new_clients_on_auto_against_old_workers(previous_scheduler,
                                                 summary_line):
    old = previous_scheduler(workers=2)
    client = _client(old, 'auto')
    # the previous release's workers say their RPC version (1.3): the
    # cap is theirs, and calls of their version go through
    assert client.api.current_cap(workload.context()) == '1.3'
    assert old.count_in_log(OLD_WORKER_ANSWER) == 0
    versions = client.api.get_service_versions(workload.context())
    assert {v['rpc_version'] for v in versions} == {'1.3'}
    for name, stats in _hosts():
        client.update_resource_stats(workload.context(), name, stats)
    db_state.wait_for(lambda: db_state.provider_count(old.engine) >= HOSTS,
                      60, '%d hosts stored' % HOSTS)

    placements = _place_with_client(client, SLOTS + 1)

    summary_line('upgrade[new client auto -> old workers]: placements=%d'
                 % len(placements))
    _check_placements(old, placements)
    assert _errors_but_old_worker_answers(old) == []


@ON_POSTGRESQL
def test_old_clients_against_new_workers(scheduler, previous_python,
                                         summary_line):
    new = scheduler(workers=2)
    _report(previous_python, new)
    lines = previous_release.finish_actor(_actor(
        previous_python, new, 'place', _write(new, 'flavor.json', FLAVOR),
        str(SLOTS + 1)))

    placements = _placements(lines)
    summary_line('upgrade[old client -> new workers]: placements=%d'
                 % len(placements))
    assert 'no_valid_host' in lines[-1]
    _check_placements(new, placements)
    assert new.errors_in_log() == []


def _consumers(queue):
    """How many consumers RabbitMQ counts on ``queue``."""
    with kombu.Connection(shared_broker.amqp_url(),
                          connect_timeout=5) as connection:
        return connection.channel().queue_declare(
            queue, passive=True).consumer_count


def _new_db_sync(server):
    result = previous_release.run_module(
        sys.executable, 'scheduler.cmd.manage', '--config-file',
        str(server.config_path), 'db', 'sync', cwd=previous_release.ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout


@ON_POSTGRESQL
def test_old_and_new_workers_share_a_topic(previous_scheduler, scheduler,
                                           previous_python, summary_line):
    old = previous_scheduler(workers=1)
    _report(previous_python, old)
    flavor = _write(old, 'flavor.json', FLAVOR)
    before = _placements(previous_release.finish_actor(
        _actor(previous_python, old, 'place', flavor, '4')))

    # expand: the new schema under the running previous release
    assert 'Database at revision' in _new_db_sync(old)
    on_new_schema = _placements(previous_release.finish_actor(
        _actor(previous_python, old, 'place', flavor, '4')))
    listed = previous_release.run_module(
        previous_python, 'scheduler.cmd.manage', '--config-file',
        str(old.config_path), 'host', 'list', cwd=old.workdir)
    assert listed.returncode == 0 and 'upg-03' in listed.stdout

    new = scheduler(workers=1, options={
        'scheduler': {'topic': old.topic},
        # new writers bump the global counter too while old workers run
        'database': {'legacy_change_counter': True}})
    # one old and one new worker take turns on the topic's queue
    assert _consumers(old.topic) == 2
    client = _client(new, '0.1')
    old_conductor = _actor(previous_python, old, 'place', flavor,
                           str(SLOTS))
    # both conductors at once: start ours once the old one got an answer
    first = json.loads(old_conductor.stdout.readline())
    from_new = []
    thread = threading.Thread(target=lambda: from_new.extend(
        _place_with_client(client, SLOTS)))
    thread.start()
    from_old = _placements([first] + previous_release.finish_actor(
        old_conductor))
    thread.join(previous_release.ACTOR_TIMEOUT)
    assert not thread.is_alive()

    placements = before + on_new_schema + from_old + from_new
    summary_line(
        'upgrade[old+new workers, one topic]: placements=%d (old workers, '
        'old schema %d; old workers, new schema %d; then both workers: old '
        'client %d, new client capped 0.1 %d)' % (
            len(placements), len(before), len(on_new_schema),
            len(from_old), len(from_new)))
    _check_placements(old, placements)
    assert old.errors_in_log() == []
    assert new.errors_in_log() == []


LOAD_IN_PREVIOUS = '''
import json, sys
from scheduler import objects
loaded = []
for primitive in json.load(open(sys.argv[1])):
    obj = objects.base.SchedulerObject.obj_from_primitive(primitive)
    changed = sorted(obj.obj_what_changed())
    loaded.append([obj.obj_name(), obj.VERSION, changed])
print(json.dumps(loaded))
'''


def test_previous_release_loads_every_object_backported_to_it(
        previous_python, tmp_path):
    """Every object, fully populated and backported to the version the
    previous release's RPC API names, is accepted by that release."""
    manifest = rpcapi.OBJECT_VERSIONS[rpcapi.VERSION_ALIASES[
        rpcapi.OLDEST_SUPPORTED]]
    classes = samples.scheduler_objects()
    primitives = [samples.sample_for_version(
        classes[name], version).obj_to_primitive(
        target_version=version, version_manifest=manifest)
        for name, version in sorted(manifest.items())]
    path = tmp_path / 'objects.json'
    path.write_text(json.dumps(primitives))
    result = subprocess.run([str(previous_python), '-c', LOAD_IN_PREVIOUS,
                             str(path)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert [(name, version) for name, version, _ in loaded] == sorted(
        manifest.items())
    for (name, _, fields), primitive in zip(loaded, primitives):
        assert fields == sorted(primitive['scheduler_object.data']), name


@ON_POSTGRESQL
def test_new_workers_keep_records_and_auto_lifts_the_cap(scheduler):
    new = scheduler(workers=2)
    listed = db_state.wait_for(lambda: _service_list(new), 30,
                               'both workers in service list')
    assert [(s['worker'], s['rpc_version'], s['up']) for s in listed] == [
        (0, rpcapi.RPC_API_VERSION, True), (1, rpcapi.RPC_API_VERSION, True)]
    client = _client(new, 'auto')
    assert client.api.current_cap(workload.context()) == \
        rpcapi.RPC_API_VERSION
    assert len(client.api.get_service_versions(workload.context())) == 2
    table = previous_release.run_module(
        sys.executable, 'scheduler.cmd.manage', '--config-file',
        str(new.config_path), 'service', 'list', cwd=previous_release.ROOT)
    print(table.stdout)
    assert table.stdout.count(' up ') == 2
    check = previous_release.run_module(
        sys.executable, 'scheduler.cmd.status', '--config-file',
        str(new.config_path), 'upgrade', 'check', cwd=previous_release.ROOT)
    print(check.stdout)
    assert check.returncode == 0, check.stdout + check.stderr
    assert '2 live workers, all on release' in check.stdout


def _service_list(server):
    result = previous_release.run_module(
        sys.executable, 'scheduler.cmd.manage', '--config-file',
        str(server.config_path), '--format', 'json', 'service', 'list',
        cwd=previous_release.ROOT)
    assert result.returncode == 0, result.stderr
    services = sorted(json.loads(result.stdout), key=lambda s: s['worker'])
    return services if len(services) == 2 else None
