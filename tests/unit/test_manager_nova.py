"""End to end through the RPC endpoint: nova's tracker reports and a nova
RequestSpec primitive, exactly as nova sends them, place a pinned guest on
the host with dedicated CPUs and claim them as PCPU."""

import copy


from scheduler.db import claims
from scheduler import context as sched_context
from scheduler.model import resource_classes as rcs
from scheduler.db import provider_reads
from tests.unit.fixtures.nova import legacy_requests
# nova's two tracker reports (libvirt with NUMA, plain), freshly dated
from tests.unit.nova.test_endpoint import manager  # noqa: F401

CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])


def test_nova_request_spec_places_a_pinned_guest(manager, db):  # noqa: F811
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
