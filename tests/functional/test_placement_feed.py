"""Issue 21, point 2: the Placement feed against a real Placement 16.

Placement 16.0.0 runs as a WSGI service on 127.0.0.1
(``placement_service``); providers are created in it with plain HTTP as
nova-compute's report client creates them: three compute nodes with
inventories, custom traits, an aggregate, a PCI child provider and an
allocation. ``scheduler-placement-feed --once`` then runs as a process
against a real ``scheduler-server`` (RabbitMQ, SQLite), and a feed in
this process checks the incremental cost against the same Placement (one
listing for an unchanged cloud, one listing and four reads for one moved
provider). Finally ``select_destinations`` through ``scheduler.client``
must land on the only provider with both the capacity and the required
trait. Without placement in ``.nova-venv`` the test skips (fails with
``CI=true``).
"""

import json
import subprocess
import sys
import uuid

import pytest
import sqlalchemy as sa

from scheduler import conf as sched_conf
from scheduler import exception
from scheduler import objects
from scheduler.client import SchedulerClient
from scheduler.cmd import placement_feed as feed_cmd
from scheduler.context import RequestContext
from scheduler.db import models
from tests.functional import db_state
from tests.functional import placement_service

pytestmark = pytest.mark.parametrize('backend', ['sqlite'])
TRAIT = 'CUSTOM_FEED_GOLD'
PCI_CLASS = 'CUSTOM_PCI_8086_1563'
AGGREGATE = str(uuid.uuid4())
TIMEOUT = 60


@pytest.fixture
def placement(tmp_path):
    with placement_service.running(tmp_path) as service:
        yield service


def _generation(placement, rp):
    return placement.request('GET', '/resource_providers/%s' % rp)[
        'generation']


def _put(placement, rp, what, body):
    body['resource_provider_generation'] = _generation(placement, rp)
    placement.request('PUT', '/resource_providers/%s/%s' % (rp, what), body)


def _inventory(total, ratio=1.0):
    return {'total': total, 'allocation_ratio': ratio}


def _provider(placement, name, inventories, traits=(), parent=None):
    body = {'name': name}
    if parent:
        body['parent_provider_uuid'] = parent
    rp = placement.request('POST', '/resource_providers', body)['uuid']
    _put(placement, rp, 'inventories', {'inventories': inventories})
    if traits:
        _put(placement, rp, 'traits', {'traits': list(traits)})
    return rp


def _compute(placement, name, vcpus, traits=()):
    return _provider(placement, name, {
        'VCPU': _inventory(vcpus), 'MEMORY_MB': _inventory(16384),
        'DISK_GB': _inventory(100)},
        traits=('COMPUTE_NET_VIF_MODEL_VIRTIO',) + tuple(traits))


def _allocate(placement, rp, resources):
    placement.request('PUT', '/allocations/%s' % uuid.uuid4(), {
        'allocations': {rp: {'resources': resources}},
        'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
        'consumer_type': 'INSTANCE'})


def _cloud(placement):
    """What three nova-computes would have written."""
    placement.request('PUT', '/traits/%s' % TRAIT, expect=(201, 204))
    placement.request('PUT', '/traits/CUSTOM_PCI_X', expect=(201, 204))
    placement.request('PUT', '/resource_classes/%s' % PCI_CLASS,
                      expect=(201, 204))
    full = _compute(placement, 'feed-0', 4, [TRAIT])
    _allocate(placement, full, {'VCPU': 3})       # 1 VCPU left
    gold = _compute(placement, 'feed-1', 8, [TRAIT])
    _put(placement, gold, 'aggregates', {'aggregates': [AGGREGATE]})
    _provider(placement, 'feed-1_0000:81:00.0',
              {PCI_CLASS: _inventory(1)},
              ['COMPUTE_MANAGED_PCI_DEVICE', 'CUSTOM_PCI_X'], parent=gold)
    _compute(placement, 'feed-2', 32)            # biggest, no trait
    return {'full': full, 'gold': gold}


def _feed_options(placement):
    return {'placement_feed': {'auth_type': 'admin_token',
                               'endpoint': placement.url, 'token': 'admin',
                               'interval': 1}}


def _run_once(server):
    done = subprocess.run(
        [sys.executable, '-m', 'scheduler.cmd.placement_feed',
         '--config-file', str(server.config_path), '--once'],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _stored_aggregate_hosts(engine):
    table = models.aggregates
    with engine.connect() as connection:
        row = connection.execute(sa.select(table.c.hosts_json).where(
            table.c.uuid == AGGREGATE)).first()
    return row and json.loads(row[0])


def _select(client):
    spec = objects.RequestSpec(
        num_instances=1,
        flavor=objects.Flavor(vcpus=2, memory_mb=2048, root_gb=10),
        resource_groups=[objects.ResourceGroup(
            name='compute', kind='compute', required_traits=[TRAIT])])
    ctxt = RequestContext(project_id='demo', roles=['service'])

    def attempt():
        try:
            return client.select_destinations(ctxt, spec)
        except exception.NoValidHost:
            return None   # reports not polled by the worker yet

    return db_state.wait_for(attempt, TIMEOUT, 'a host for the request')


def test_feed_into_scheduler_then_select(scheduler, placement):
    rps = _cloud(placement)
    server = scheduler(workers=1, options=_feed_options(placement))
    first = _run_once(server)
    assert (first['requests'], first['read'], first['reported']) == (
        1 + 4 * 4, 4, 3)
    db_state.wait_for(lambda: db_state.provider_count(server.engine) == 3,
                      TIMEOUT, 'three providers stored')
    assert db_state.wait_for(lambda: _stored_aggregate_hosts(
        server.engine), TIMEOUT, 'the aggregate stored') == ['feed-1']

    conf = sched_conf.new_config()
    conf(['--config-file', str(server.config_path)], project='scheduler',
         default_config_files=[])
    client = SchedulerClient(conf)
    try:
        feed = feed_cmd.build_feed(conf, client)
        assert feed.run_cycle().requests == 17
        assert feed.run_cycle().requests == 1
        _allocate(placement, rps['gold'], {'MEMORY_MB': 1024})
        moved = feed.run_cycle()
        assert (moved.requests, moved.read, moved.reported) == (5, 1, 1)
        [[chosen]] = _select(client)
    finally:
        client.close()
    assert (chosen.host, chosen.compute_node_uuid) == ('feed-1',
                                                       rps['gold'])
