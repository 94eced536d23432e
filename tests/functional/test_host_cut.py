"""Issue 38: a scheduler host cut off the network, not killed.

Two scheduler hosts serve one topic on one database (PostgreSQL): host B
on this machine, host A in a network namespace of its own
(``net_host``), reaching the broker and the database through its link.
Conductors place without a pause; A's link goes down for 30 s (its
processes live on, its TCP connections carry nothing, the broker and
the database learn of it only by their own timeouts), then comes back.
Then B stops, so that only A can answer. Audited:

* every call answered: a placement, or an answer that says "retry";
  none waits longer than 10 s; placements never stall 10 s while B
  serves (a claim A had begun holds its locks until the database ends
  the stalled transaction: ``[database] idle_transaction_timeout``);
* A serves again within 10 s of its link's return;
* a tracker reporting new hosts during the cut (a process of its own):
  every report stored, none lost with A;
* no overcommit, no claim whose caller was not told, no placement
  without its claim.

``SCHEDULER_LONG_FAULTS=1`` (``tox -e faults-cluster-long``) adds a cut
of 5 minutes.

And the same two hosts when every process of A (its parent and its
workers) is SIGKILLed at once under load: the same audit, B answering
everything meanwhile.

And A behind a slow, lossy link (200 ms each way, 1 % of the packets
lost each way: ``net_host.forward(port, delay=...)``, ``lose``; the
kernel here has no ``tc netem``) from its start, under load, with a
tracker reporting; then B stops and A serves alone: the same audit, and
how long A's answers take.
"""

import os
import signal
import time

import pytest

from tests.functional import fault_load
from tests.functional import net_host
from tests.functional import server as server_mod
from tests.functional import services
from tests.functional import shared_broker
from tests.functional import workload

# one cluster fault test at a time (tests/functional/conftest.py)
pytestmark = pytest.mark.usefixtures('one_cluster_fault_at_a_time')

LONGEST = 10.0
# 36 instances each (fault_load.TINY): room for 21,600 placements, about
# three times what a run places on a quiet machine
HOSTS = 600
#: reports of new hosts a tracker sends while A is cut off
REPORTS = 300
CUTS = [30] + ([300] if os.environ.get('SCHEDULER_LONG_FAULTS') else [])


@pytest.fixture
def two_hosts(rabbitmq, database_url, tmp_path, request):
    """Hosts A (a network namespace) and B (this machine), two workers
    each; with ``indirect`` parametrization, ``(delay, loss)``: A's link
    delays everything ``delay`` seconds each way and loses ``loss`` %
    of its packets each way."""
    net_host.require()
    delay, loss = getattr(request, 'param', (None, 0))
    if loss:
        services.require_here(services.missing_tool('nft'),
                              'a lossy link (nftables)')
    servers = []
    with services.one_cluster(), net_host.running('sched-a') as host:
        for port in (services.PORTS['rabbitmq'],
                     services.PORTS['postgresql']):
            host.forward(port, delay=delay)
        if loss:
            host.lose(loss)
        topic = server_mod.SchedulerServer.new_topic()
        # the broker heartbeat doc/source/admin/production.rst sets
        rabbit = {'heartbeat_timeout_threshold': 3}
        b = server_mod.SchedulerServer(
            tmp_path / 'host-b', database_url, 2,
            {'DEFAULT': {'host': 'host-b'}, 'scheduler': {'topic': topic},
             'oslo_messaging_rabbit': rabbit})
        a = server_mod.SchedulerServer(
            tmp_path / 'host-a',
            database_url.replace('127.0.0.1', host.address), 2,
            # the shared broker's vhost of this test process, through
            # A's link
            {'DEFAULT': {'host': 'host-a', 'transport_url':
                         shared_broker.transport_url().replace(
                             services.HOST, host.address)},
             'scheduler': {'topic': topic}, 'oslo_messaging_rabbit': rabbit})
        a.prefix = host.prefix
        servers += [a, b]
        try:
            b.db_sync()
            for server in servers:
                server.start()
            for server in servers:
                server.wait_ready()
            yield host, a, b
        finally:
            host.heal()
            failed = getattr(request.node, 'report_call', None)
            for server in servers:
                server.close()
                if failed is not None and failed.failed:
                    print(server.tail())


@pytest.mark.parametrize('backend', ['postgresql'])
@pytest.mark.parametrize('seconds', CUTS)
def test_a_host_cut_off_the_network(two_hosts, seconds, summary_line):
    host, a, b = two_hosts
    # room for every placement of a long cut too (a quiet machine places
    # about 120 a second)
    hosts = max(HOSTS, 10 * seconds)
    workload.push_hosts(b, workload.host_reports(hosts))
    with fault_load.Load(b, threads=4) as load:
        time.sleep(3)
        host.cut()
        # a tracker reports new hosts meanwhile, from a process of its own
        reports = fault_load.Reports(b, REPORTS, prefix='while-cut')
        reports.start()
        time.sleep(seconds)
        reports.join()
        host.heal()
        healed = time.monotonic()
        stall_with_b = load.longest_stall()
        time.sleep(2)
        b.stop()
        alone = time.monotonic()
        time.sleep(LONGEST)
    again = load.first_success_after(alone)
    problems = fault_load.audit(b, load)
    # every report the broker took is stored (A serves them now)
    stored = reports.stored()
    summary_line(
        'host cut: host A off the network for %d s under load: %s; longest '
        'wait %.1f s; longest stall while B served %.1f s; A alone served '
        '%s s after B stopped (%.1f s after its link came back); audit '
        'problems %d; reports sent meanwhile %d, stored %d' % (
            seconds, load.counts(), load.longest_wait, stall_with_b,
            None if again is None else round(again, 2),
            alone - healed + (again or 0), len(problems), REPORTS, stored))
    assert load.unexpected() == []
    assert load.longest_wait <= LONGEST
    assert stall_with_b <= LONGEST
    assert again is not None and alone - healed + again <= LONGEST
    assert problems == []
    assert stored == REPORTS
    a.assert_alive()



@pytest.mark.parametrize('backend', ['postgresql'])
def test_every_process_of_a_host_killed(two_hosts, summary_line):
    host, a, b = two_hosts
    workload.push_hosts(b, workload.host_reports(HOSTS))
    with fault_load.Load(b, threads=4) as load:
        time.sleep(3)
        pids = [a.process.pid] + a.worker_pids()
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        time.sleep(LONGEST)
    a.process.wait(10)
    a.process = None
    after = [kind for at, kind, _, _ in load.answers if at > killed]
    problems = fault_load.audit(b, load)
    summary_line(
        'host killed: every process of host A (%d) SIGKILLed under load: '
        '%s (%d answered after); longest wait %.1f s; longest stall %.1f '
        's; audit problems %d' % (len(pids), load.counts(), len(after),
                                  load.longest_wait, load.longest_stall(),
                                  len(problems)))
    assert load.unexpected() == []
    assert load.longest_wait <= LONGEST
    assert load.longest_stall() <= LONGEST
    assert 'placed' in after
    assert problems == []


#: A's link in the slow-link test: seconds each way, % lost each way
SLOW_LINK = (0.2, 1)
#: seconds of each phase of the slow-link test (A beside B, A alone)
SLOW_FOR = 20


@pytest.mark.parametrize('backend', ['postgresql'])
@pytest.mark.parametrize('two_hosts', [SLOW_LINK], indirect=True,
                         ids=['200ms-1pct'])
def test_a_host_behind_a_slow_lossy_link(two_hosts, summary_line):
    host, a, b = two_hosts
    workload.push_hosts(b, workload.host_reports(HOSTS))
    reports = fault_load.Reports(b, REPORTS, prefix='slow-link',
                                 per_second=REPORTS / SLOW_FOR)
    with fault_load.Load(b, threads=4) as load:
        reports.start()
        time.sleep(SLOW_FOR)
        reports.join()
        both = dict(load.counts())
        b.stop()
        alone = time.monotonic()
        time.sleep(SLOW_FOR)
    again = load.first_success_after(alone)
    waits = sorted(load.waits_after(alone))
    summary_line(
        'slow link: host A behind %d ms each way and %d%% loss each way, '
        'beside host B, %d s: %s; then A alone %d s: placed %d, median '
        'wait %.2f s, slowest %.2f s; %s' % (
            SLOW_LINK[0] * 1000, SLOW_LINK[1], SLOW_FOR, both, SLOW_FOR,
            len(waits), waits[len(waits) // 2] if waits else -1,
            waits[-1] if waits else -1,
            fault_load.audit_line(b, load, reports, again)))
    assert load.unexpected() == []
    assert load.longest_wait <= LONGEST
    assert again is not None and again <= LONGEST
    assert fault_load.audit(b, load) == []
    assert reports.stored() == REPORTS
    a.assert_alive()
