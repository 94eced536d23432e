"""Issue 13: security, on real RabbitMQ nodes and a real scheduler-server.

* policy: a call without the service role is refused with an expected
  Forbidden naming the rule (one warning in the server log), the same call
  with the role is served;
* TLS: a server and clients on a private TLS-only RabbitMQ node with a
  self-signed CA place instances; a CA that did not sign the broker's
  certificate stops ``scheduler-server`` at start-up with one clear line;
* least privilege: the broker users of doc/source/admin/security.rst,
  created by running that page's commands on a private node: each role
  works, and a tracker's credentials are refused when they publish a
  select_destinations call;
* secrets: with passwords in the transport URL (two hosts) and in
  ``[database] connection``, no log line or output of the run shows them.
"""

import contextlib
import logging
import os
import subprocess
import sys
import uuid

import oslo_messaging
import pytest

from scheduler import conf as sched_conf
from scheduler import exception
from scheduler.client import SchedulerClient
from scheduler.context import RequestContext
from tests import rst_blocks
from tests.functional import db_state
from tests.functional import rabbit_node
from tests.functional import server as server_mod
from tests.functional import workload
from tests import waiting

HOSTS = 4
ADMIN_PAGE = 'doc/source/admin/security.rst'
SERVICE = RequestContext(user_id='conductor', project_id='service',
                         roles=['service'])
MEMBER = RequestContext(user_id='u1', project_id='p1', roles=['member'])




def _place_one(client, ctxt=SERVICE):
    spec = workload.object_spec(workload.FLAVORS[0])
    [[chosen, *_]] = client.select_destinations(ctxt, spec)
    return chosen


# -- policy ------------------------------------------------------------


@pytest.mark.parametrize('backend', ['sqlite'])
def test_call_without_the_role_is_refused_with_it_served(scheduler):
    server = scheduler(workers=1)
    workload.push_hosts(server, workload.host_reports(HOSTS))
    client = server.client()
    with pytest.raises(exception.Forbidden) as info:
        _place_one(client, MEMBER)
    assert 'scheduler:select_destinations' in str(info.value)
    assert _place_one(client, SERVICE).host.startswith('host')
    assert server.count_in_log('Refused select_destinations') == 1
    # a cast without the role: refused on the server, logged once
    client.update_resource_stats(MEMBER, 'intruder', {
        'vcpus': 1, 'memory_mb': 1, 'local_gb': 1})
    waiting.wait_for(
        lambda: server.count_in_log('Refused update_resource_stats'),
        what='the refused cast in the server log')
    assert server.count_in_log('Refused update_resource_stats') == 1
    assert 'intruder' not in server.log_text().replace(
        'Refused update_resource_stats', '')
    assert not server.errors_in_log()


# -- TLS ------------------------------------------------------------------


@pytest.fixture
def tls_node(tmp_path):
    rabbit_node.require()
    tls = rabbit_node.make_tls_files(tmp_path / 'pki')
    with rabbit_node.running(tmp_path / 'rabbit-tls', tls=tls) as node:
        yield node


def _tls_options(node, ca, retries=2):
    return {'DEFAULT': {'transport_url': node.transport_url(),
                        'startup_retries': retries},
            'oslo_messaging_rabbit': {'ssl': True, 'ssl_ca_file': ca}}


@pytest.mark.parametrize('backend', ['sqlite'])
def test_placements_over_a_tls_only_broker(tls_node, scheduler):
    server = scheduler(workers=1,
                       options=_tls_options(tls_node, tls_node.tls.ca))
    workload.push_hosts(server, workload.host_reports(HOSTS))
    client = server.client()
    placed = {_place_one(client).host for _ in range(3)}
    assert placed and all(h.startswith('host') for h in placed)
    # the shared plain broker saw none of it: the topic lives on the node
    assert server.topic in tls_node.ctl('list_queues', 'name')
    # the admin page's rabbitmq.conf example sets what this node runs on
    example = rst_blocks.block_containing(ADMIN_PAGE, 'listeners.ssl')
    running = (tls_node.base_dir / 'rabbitmq.conf').read_text()
    for line in example.splitlines():
        assert line.split(' = ')[0] + ' = ' in running, line


@pytest.mark.parametrize('backend', ['sqlite'])
def test_wrong_ca_is_a_clear_start_up_error(tls_node, tmp_path,
                                            database_url):
    other = rabbit_node.make_tls_files(tmp_path / 'other-pki',
                                       common_name='not-the-broker-ca')
    server = server_mod.SchedulerServer(
        tmp_path / 'wrong-ca', database_url, 1,
        _tls_options(tls_node, other.ca, retries=5))
    server.db_sync()
    result = subprocess.run(
        [sys.executable, '-m', 'scheduler.cmd.server', '--config-file',
         str(server.config_path)], cwd=server_mod.ROOT,
        capture_output=True, text=True, timeout=60)
    # no retry makes the CA sign the broker's certificate: a mistake (2),
    # not an outage, and not retried
    assert result.returncode == 2, result.stderr
    [line] = [s for s in result.stderr.splitlines()
              if s.startswith('scheduler-server:')]
    assert 'permanent error, not retried' in line
    assert 'TLS certificate not trusted' in line
    assert 'ssl_ca_file = %s' % other.ca in line
    assert 'CERTIFICATE_VERIFY_FAILED' in line


@pytest.mark.parametrize('backend', ['sqlite'])
def test_plain_amqp_to_a_tls_only_broker_fails_start_up(
        tls_node, tmp_path, database_url):
    server = server_mod.SchedulerServer(
        tmp_path / 'no-tls', database_url, 1,
        {'DEFAULT': {'transport_url': tls_node.transport_url(),
                     'startup_retries': 0}})
    server.db_sync()
    result = subprocess.run(
        [sys.executable, '-m', 'scheduler.cmd.server', '--config-file',
         str(server.config_path)], cwd=server_mod.ROOT,
        capture_output=True, text=True, timeout=60)
    # looks like an outage to the probe: 75, which a supervisor restarts
    assert result.returncode == 75, result.stderr
    assert 'message broker unreachable' in result.stderr


# -- least privilege on the broker -------------------------------------


@pytest.fixture(scope='module')
def broker_users(tmp_path_factory):
    """A private node with the users of doc/source/admin/security.rst,
    created by running that page's commands verbatim; yields (node,
    passwords)."""
    rabbit_node.require()
    base = tmp_path_factory.mktemp('rabbit-users')
    passwords = {user: 'S3cret-%s-%s' % (user, uuid.uuid4().hex[:8])
                 for user in ('scheduler', 'conductor', 'tracker')}
    commands = rst_blocks.block_containing(ADMIN_PAGE, 'add_vhost')
    with rabbit_node.running(base / 'node') as node:
        env = dict(node.environ(), PATH='%s:%s' % (
            os.path.dirname(rabbit_node.CTL), os.environ['PATH']))
        env.update({'%s_PASSWORD' % user.upper(): password
                    for user, password in passwords.items()})
        result = subprocess.run(['bash', '-e', '-c', commands], env=env,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        yield node, passwords


def _role_url(broker_users, user, hosts=None):
    node, passwords = broker_users
    hosts = hosts or ['127.0.0.1:%d' % node.port]
    return 'rabbit://%s/scheduler' % ','.join(
        '%s:%s@%s' % (user, passwords[user], host) for host in hosts)


def _role_client(server, url):
    conf = sched_conf.new_config()
    conf(['--config-file', str(server.config_path)], project='scheduler',
         default_config_files=[])
    conf.set_override('transport_url', url)
    return SchedulerClient(conf)


def _private_server(workdir, db_url, transport_url, options=None):
    """A server with the topic names the admin page's patterns expect."""
    values = {'DEFAULT': {'transport_url': transport_url},
              'scheduler': {'topic': 'scheduler'}}
    for section, more in (options or {}).items():
        values.setdefault(section, {}).update(more)
    server = server_mod.SchedulerServer(workdir, db_url, 1, values)
    server.topic = 'scheduler'   # for raw_client()
    server.db_sync()
    return server


@contextlib.contextmanager
def _serving(server, *clients):
    """Run ``server``; never use its close(): that deletes the queues of
    its topic on the shared broker, and 'scheduler' is not ours there."""
    server.start().wait_ready()
    try:
        yield server
    finally:
        for client in clients:
            client.close()
        server.stop()


def _report_hosts(tracker, count=HOSTS):
    for name, stats in workload.host_reports(count):
        tracker.update_resource_stats(SERVICE, name, stats)


def _wait_for_hosts(server, count=HOSTS):
    waiting.wait_for(lambda: db_state.provider_count(server.engine) >= count,
              what='%d hosts reported by the tracker' % count)


@pytest.mark.parametrize('backend', ['sqlite'])
def test_each_broker_role_works_and_trackers_cannot_call(
        broker_users, tmp_path, database_url):
    server = _private_server(tmp_path / 'least', database_url,
                             _role_url(broker_users, 'scheduler'))
    tracker = _role_client(server, _role_url(broker_users, 'tracker'))
    conductor = _role_client(server, _role_url(broker_users, 'conductor'))
    with _serving(server, tracker, conductor):
        _report_hosts(tracker)
        _wait_for_hosts(server)
        assert _place_one(conductor).host.startswith('host')
        # a call needs a reply queue the tracker may not declare
        with pytest.raises(oslo_messaging.MessageDeliveryFailure) as info:
            _place_one(tracker)
        assert ("access to queue 'reply_" in str(info.value)
                and "refused for user 'tracker'" in str(info.value))
        # even a bare cast to the decision topic is refused by the broker
        raw = server.raw_client(tracker).prepare(retry=0)
        with pytest.raises(oslo_messaging.MessageDeliveryFailure) as info:
            raw.cast(SERVICE, 'select_destinations',
                     spec_obj=workload.object_spec(workload.FLAVORS[0]))
        assert ("access to topic 'scheduler' in exchange 'scheduler' in "
                "vhost 'scheduler' refused for user 'tracker'"
                in str(info.value))
        assert server.count_in_log('select_destinations') == 0
        assert not server.errors_in_log()


# -- secrets --------------------------------------------------------------


def _run(args, timeout=120):
    result = subprocess.run([sys.executable, '-m', *args],
                            cwd=server_mod.ROOT, capture_output=True,
                            text=True, timeout=timeout)
    return result.returncode, result.stdout + result.stderr


def _with_password(url, password):
    scheme, rest = url.split('://', 1)
    user, host = rest.split('@', 1)
    return '%s://%s:%s@%s' % (scheme, user, password, host)


@pytest.mark.parametrize('backend', ['postgresql'])
def test_no_secret_in_any_log_line(broker_users, tmp_path, database_url,
                                   caplog):
    caplog.set_level(logging.DEBUG)
    node, passwords = broker_users
    db_password = 'Db-S3cret-%s' % uuid.uuid4().hex[:8]
    db_url = _with_password(database_url, db_password)
    dead = ['127.0.0.1:%d' % rabbit_node.free_port() for _ in range(2)]
    server = _private_server(
        tmp_path / 'secrets', db_url, _role_url(
            broker_users, 'scheduler', [dead[0], '127.0.0.1:%d' % node.port]),
        {'DEFAULT': {'debug': True}})
    outputs = []
    config = ['--config-file', str(server.config_path)]
    outputs.append(_run(['scheduler.cmd.manage', *config, 'host', 'list']))
    tracker = _role_client(server, _role_url(broker_users, 'tracker'))
    conductor = _role_client(server, _role_url(broker_users, 'conductor'))
    with _serving(server, tracker, conductor):
        _report_hosts(tracker)
        _wait_for_hosts(server)
        _place_one(conductor)
        with pytest.raises(exception.Forbidden):
            _place_one(conductor, MEMBER)
    # start-up failures print the URLs they could not use
    no_broker = server_mod.SchedulerServer(
        tmp_path / 'no-broker', db_url, 1, {'DEFAULT': {
            'transport_url': _role_url(broker_users, 'scheduler', dead),
            'startup_retries': 0}})
    outputs.append(_run(['scheduler.cmd.server', '--config-file',
                         str(no_broker.config_path)]))
    no_database = server_mod.SchedulerServer(
        tmp_path / 'no-database',
        db_url.replace('127.0.0.1/', '127.0.0.1:1/'), 1)
    outputs.append(_run(['scheduler.cmd.manage', '--config-file',
                         str(no_database.config_path), 'db', 'version']))
    # the broker unreachable: an outage (75); the database: a CLI's 2
    assert [code for code, _ in outputs] == [0, 75, 2], outputs
    assert 'scheduler:***@%s,scheduler:***@%s' % tuple(dead) in outputs[1][1]
    assert 'postgres:***@127.0.0.1:1/' in outputs[2][1]

    texts = [text for _, text in outputs] + [caplog.text] + [
        path.read_text(errors='replace') for path in tmp_path.rglob('*')
        if path.is_file() and path.suffix in ('.log', '.out')]
    lines = [line for text in texts for line in text.splitlines()]
    secrets = [db_password] + list(passwords.values())
    leaks = [line for line in lines if any(s in line for s in secrets)]
    # what was searched holds what a secret could have leaked into: the
    # server's debug log of a decision and of a refused call
    logged = server.log_text()
    assert 'DEBUG' in logged and 'Decision req-' in logged, logged[-2000:]
    assert 'Refused select_destinations' in logged, logged[-2000:]
    assert not leaks, leaks[:5]
