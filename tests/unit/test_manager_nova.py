"""End to end through the RPC endpoint: nova's tracker reports and a nova
RequestSpec primitive, exactly as nova sends them, place a pinned guest on
the host with dedicated CPUs and claim them as PCPU."""

import copy
import datetime

import pytest

from scheduler.service import composition
from scheduler.db import claims
from scheduler import context as sched_context
from scheduler.model import resource_classes as rcs
from scheduler.db import provider_reads
from tests.unit.fixtures.nova import compute_nodes
from tests.unit.fixtures.nova import legacy_requests

CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])


@pytest.fixture
def manager(conf, db):
    # taken now, not at import: the suite may run longer than
    # service_down_time before this test
    now = datetime.datetime.now(datetime.timezone.utc).strftime(
        '%Y-%m-%dT%H:%M:%SZ')
    manager = composition.build_manager(conf, db)
    for report in (compute_nodes.LIBVIRT_NUMA_WIRE,
                   compute_nodes.PLAIN_WIRE):
        report = copy.deepcopy(report)
        data = report['nova_object.data']
        data['updated_at'] = now
        manager.update_resource_stats(
            CTXT, [data['host'], data['hypervisor_hostname']], report)
    yield manager
    manager.stop()


def test_nova_request_spec_places_a_pinned_guest(manager, db):
    inventories = {p['host']: p['inventories']
                   for p in provider_reads.list_providers(db)}
    assert inventories['compute-01'][rcs.PCPU]['total'] == 8
    assert inventories['compute-01'][rcs.PCPU]['reported_used'] == 1
    assert rcs.PCPU not in inventories['compute-02']
    spec = copy.deepcopy(legacy_requests.REQUEST_SPEC)
    spec['nova_object.data']['num_instances'] = 1
    uuid = legacy_requests.UUIDS[0]
    [[chosen]] = manager.select_destinations(CTXT, spec, [uuid])
    assert chosen.host == 'compute-01'
    claimed = {a['resource_class']: a['amount']
               for a in claims.list_allocations(db)
               if a['consumer_uuid'] == uuid}
    assert claimed[rcs.PCPU] == 4 and rcs.VCPU not in claimed
