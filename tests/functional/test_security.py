"""Issue 13: security, on real RabbitMQ nodes and a real scheduler-server.

* policy: a call without the service role is refused with an expected
  Forbidden naming the rule (one warning in the server log), the same call
  with the role is served;
* TLS: a server and clients on a private TLS-only RabbitMQ node with a
  self-signed CA place instances; a CA that did not sign the broker's
  certificate stops ``scheduler-server`` at start-up with one clear line;
* least privilege: the broker users of doc/admin/security.rst, created by
  running that page's commands on a private node: each role works, and a
  tracker's credentials are refused when they publish a
  select_destinations call;
* secrets: with passwords in the transport URL (two hosts) and in
  ``[database] connection``, no log line or output of the run shows them.
"""

import os
import subprocess
import sys
import time
import uuid

import pytest

from scheduler import exception
from scheduler.context import RequestContext
from tests.functional import rabbit_node
from tests.functional import server as server_mod
from tests.functional import workload

HOSTS = 4
SERVICE = RequestContext(user_id='conductor', project_id='service',
                         roles=['service'])
MEMBER = RequestContext(user_id='u1', project_id='p1', roles=['member'])


def require_private_node():
    why = rabbit_node.available()
    if why is None:
        return
    if os.environ.get('CI') == 'true':
        pytest.fail('a private RabbitMQ node is required in CI: %s' % why,
                    pytrace=False)
    pytest.skip('cannot start a private RabbitMQ node: %s' % why)


def _wait_for(predicate, timeout=20, what='condition'):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail('timed out waiting for %s' % what, pytrace=False)
        time.sleep(0.2)


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
    _wait_for(lambda: server.count_in_log('Refused update_resource_stats'),
              what='the refused cast in the server log')
    assert server.count_in_log('Refused update_resource_stats') == 1
    assert 'intruder' not in server.log_text().replace(
        'Refused update_resource_stats', '')
    assert not server.errors_in_log()


# -- TLS ------------------------------------------------------------------


@pytest.fixture
def tls_node(tmp_path):
    require_private_node()
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


@pytest.mark.parametrize('backend', ['sqlite'])
def test_wrong_ca_is_a_clear_start_up_error(tls_node, tmp_path,
                                            database_url):
    other = rabbit_node.make_tls_files(tmp_path / 'other-pki',
                                       common_name='not-the-broker-ca')
    server = server_mod.SchedulerServer(
        tmp_path / 'wrong-ca', database_url, 1,
        _tls_options(tls_node, other.ca, retries=0))
    server.db_sync()
    result = subprocess.run(
        [sys.executable, '-m', 'scheduler.cmd.server', '--config-file',
         str(server.config_path)], cwd=server_mod.ROOT,
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    [line] = [s for s in result.stderr.splitlines()
              if s.startswith('scheduler-server:')]
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
    assert result.returncode == 2, result.stderr
    assert 'message broker unreachable' in result.stderr


def _unique(prefix):
    return '%s-%s' % (prefix, uuid.uuid4().hex[:8])
