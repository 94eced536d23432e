"""Issue 4 against real processes: server groups under concurrency,
aggregates and instance info surviving a restart, and notifications.

Server-group policies are enforced twice: by the filters when a worker
plans, and in the claim transaction under the group's row lock. The
concurrency test checks the second: 4 workers, 20 concurrent boots of one
group on 10 hosts, never two members on a host (anti-affinity), all on
one host (affinity).
"""

import collections
import concurrent.futures
import uuid

import oslo_messaging
import pytest

from scheduler import exception
from tests.functional import databases
from tests.functional import db_state
from tests.functional import shared_broker
from tests.functional import workload

FLAVOR = {'vcpus': 1, 'memory_mb': 512, 'root_gb': 5}
GROUP_FILTERS = ('ComputeFilter,AvailabilityZoneFilter,ResourceFitFilter,'
                 'ServerGroupAffinityFilter,ServerGroupAntiAffinityFilter,'
                 'SameHostFilter,DifferentHostFilter')


def _big_hosts(count, prefix='host'):
    return [('%s-%02d' % (prefix, i),
             {'vcpus': 64, 'memory_mb': 131072, 'local_gb': 2000,
              'cpu_allocation_ratio': 1.0})
            for i in range(count)]


def _boot_group(client, group_uuid, policy):
    """One single-instance boot in the group; its host, or None (NVH)."""
    spec = workload.legacy_spec(FLAVOR, [str(uuid.uuid4())])
    props = {'group_policies': [policy], 'group_uuid': group_uuid}
    try:
        return client.select_destinations(workload.context(), spec,
                                          props)[0][0].host
    except exception.NoValidHost:
        return None


def _concurrent_boots(server, group_uuid, policy, boots=20, threads=10):
    # one client (one transport) is safe to share between threads, and
    # closing clients is slow: share it
    client = server.client()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        futures = [pool.submit(_boot_group, client, group_uuid, policy)
                   for _ in range(boots)]
        return [f.result() for f in futures]


def _members_per_host(server, group_uuid):
    import sqlalchemy as sa
    from scheduler.db import models
    gm = models.group_members
    with server.engine.connect() as connection:
        return collections.Counter(dict(connection.execute(
            sa.select(gm.c.host, sa.func.count())
            .where(gm.c.group_uuid == group_uuid)
            .group_by(gm.c.host)).all()))


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_group_policies_hold_with_four_racing_workers(scheduler, backend,
                                                      summary_line):
    server = scheduler(workers=4, options={'filter_scheduler': {
        'enabled_filters': GROUP_FILTERS, 'host_subset_size': 10}})
    workload.push_hosts(server, _big_hosts(10))

    anti = str(uuid.uuid4())
    hosts = _concurrent_boots(server, anti, 'anti-affinity')
    placed = [h for h in hosts if h]
    refused = hosts.count(None)
    assert len(placed) == 10, hosts
    assert len(set(placed)) == 10, 'two anti-affinity members share a host'
    members = _members_per_host(server, anti)
    assert set(members.values()) == {1}, members

    affinity = str(uuid.uuid4())
    hosts = _concurrent_boots(server, affinity, 'affinity')
    assert None not in hosts, hosts
    assert len(set(hosts)) == 1, collections.Counter(hosts)

    assert not db_state.overcommit(db_state.read_state(server.engine))
    conflicts = server.count_in_log('Claim conflict')
    summary_line('server groups[%s]: 4 workers, 20 concurrent '
                 'anti-affinity boots on 10 hosts -> %d placed on %d hosts, '
                 '%d NoValidHost; 20 affinity boots -> all on %s; '
                 '%d claim/group conflicts' % (
                     backend, len(placed), len(set(placed)), refused,
                     hosts[0], conflicts))


@pytest.mark.parametrize('backend', ['postgresql'])
def test_aggregates_and_instances_survive_a_restart(scheduler,
                                                    summary_line):
    server = scheduler(workers=2, options={'filter_scheduler': {
        'enabled_filters': GROUP_FILTERS}})
    workload.push_hosts(server, _big_hosts(6))
    client = server.client()
    ctxt = workload.context()
    client.update_aggregates(ctxt, [{
        'uuid': str(uuid.uuid4()), 'name': 'gold',
        'hosts': ['host-01', 'host-02'],
        'metadata': {'availability_zone': 'gold'}}])
    neighbour = str(uuid.uuid4())
    client.update_instance_info(ctxt, 'host-04', [{
        'uuid': neighbour, 'project_id': 'project-1'}])
    # the casts stored (every queue of the topic drained), then polled
    db_state.wait_for(lambda: shared_broker.drained(server.topic, every=True),
                      30, 'the casts stored')
    workload.wait_polled()

    def gold_hosts():
        spec = workload.legacy_spec(FLAVOR, [str(uuid.uuid4())
                                             for _ in range(4)],
                                    availability_zone='gold')
        return {d[0].host for d in client.select_destinations(ctxt, spec)}

    def same_host():
        spec = workload.legacy_spec(FLAVOR, [str(uuid.uuid4())])
        props = {'scheduler_hints': {'same_host': [neighbour]}}
        return client.select_destinations(ctxt, spec, props)[0][0].host

    assert gold_hosts() <= {'host-01', 'host-02'}
    assert same_host() == 'host-04'
    server.restart()
    client = server.client()
    assert gold_hosts() <= {'host-01', 'host-02'}
    assert same_host() == 'host-04'
    with pytest.raises(exception.NoValidHost) as info:
        spec = workload.legacy_spec(FLAVOR, [str(uuid.uuid4())],
                                    availability_zone='nowhere')
        client.select_destinations(ctxt, spec)
    summary_line('NoValidHost from a real call: %s' % info.value)
    assert 'AvailabilityZoneFilter' in info.value.reason


class _Recorder:
    def __init__(self):
        self.events = []

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.events.append((event_type, payload))

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self.events.append((event_type, payload))


@pytest.mark.parametrize('backend', ['sqlite'])
def test_select_destinations_notifications_on_rabbitmq(scheduler):
    topic = 'sched-notify-%s' % uuid.uuid4().hex[:8]
    server = scheduler(workers=1, options={'oslo_messaging_notifications': {
        'driver': 'messagingv2', 'topics': topic}})
    client = server.client()
    recorder = _Recorder()
    transport = oslo_messaging.get_notification_transport(client.conf)
    listener = oslo_messaging.get_notification_listener(
        transport, [oslo_messaging.Target(topic=topic)], [recorder],
        executor='threading')
    listener.start()
    try:
        workload.push_hosts(server, _big_hosts(2))
        spec = workload.legacy_spec(FLAVOR, [str(uuid.uuid4())])
        host = client.select_destinations(workload.context(),
                                          spec)[0][0].host
        too_big = workload.legacy_spec(dict(FLAVOR, vcpus=1000),
                                       [str(uuid.uuid4())])
        with pytest.raises(exception.NoValidHost):
            client.select_destinations(workload.context(), too_big)
        db_state.wait_for(lambda: len(recorder.events) >= 4, 20,
                          'four notifications')
    finally:
        listener.stop()
        listener.wait()
        transport.cleanup()
    kinds = [e for e, _ in recorder.events]
    assert kinds == ['scheduler.select_destinations.start',
                     'scheduler.select_destinations.end',
                     'scheduler.select_destinations.start',
                     'scheduler.select_destinations.error'], kinds
    end = recorder.events[1][1]['scheduler_object.data']
    assert end['hosts'] == [host] and end['duration_ms'] > 0
    error = recorder.events[3][1]['scheduler_object.data']
    assert error['error_class'] == 'NoValidHost'
