"""The feed's cost and diffing against a fake Placement: one listing per
cycle, four reads per provider whose generation moved, one report per
changed tree, resends from memory, aggregates by membership."""

import threading
from unittest import mock

import pytest

from scheduler.placement_feed import feed as feed_mod
from scheduler.placement_feed import reader
from tests.unit.placement_feed import fake_placement as fakes

COMPUTE = {'VCPU': fakes.inventory(16, ratio=4.0),
           'MEMORY_MB': fakes.inventory(65536, reserved=512),
           'DISK_GB': fakes.inventory(500)}


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def placement():
    return fakes.FakePlacement()


@pytest.fixture
def client():
    return fakes.RecordingClient()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture(params=[1, 4], ids=['sequential', '4-reads'])
def feed(request, placement, client, clock):
    """Every test runs with one read at a time and with four at once."""
    return feed_mod.PlacementFeed(reader.PlacementReader(placement), client,
                                  ctxt=None, resend_interval=30.0,
                                  clock=clock, read_concurrency=request.param)


def _cloud(placement, hosts):
    return [placement.add('compute-%03d' % index, inventories=COMPUTE,
                          traits=['HW_CPU_X86_AVX2'],
                          aggregates=['agg-%d' % (index % 2)])
            for index in range(hosts)]


def test_first_cycle_reads_all_then_one_listing(placement, client, feed):
    _cloud(placement, 10)
    first = feed.run_cycle()
    assert (first.requests, first.read, first.reported) == (41, 10, 10)
    second = feed.run_cycle()
    assert (second.requests, second.read, second.reported) == (1, 0, 0)
    assert placement.urls[-1] == '/resource_providers'
    assert len(client.reports) == 10


def test_one_changed_provider_costs_one_listing_and_four_reads(
        placement, client, feed):
    uuids = _cloud(placement, 10)
    feed.run_cycle()
    placement.change(uuids[3], usages={'VCPU': 5})
    cycle = feed.run_cycle()
    assert (cycle.requests, cycle.read, cycle.reported) == (5, 1, 1)
    name, stats = client.reports[-1]
    assert name == 'compute-003'
    assert stats['used'] == {'VCPU': 5}
    assert stats['vcpus_used'] == 5


def test_generation_moved_without_visible_change_sends_nothing(
        placement, client, feed):
    uuids = _cloud(placement, 2)
    feed.run_cycle()
    placement.change(uuids[0])
    cycle = feed.run_cycle()
    assert (cycle.requests, cycle.read, cycle.reported) == (5, 1, 0)


def test_child_change_refolds_its_tree(placement, client, feed):
    root = placement.add('compute-1', inventories=COMPUTE)
    pci = placement.add('compute-1_0000:81:00.0', parent=root,
                        inventories={'CUSTOM_PCI_8086_1563':
                                     fakes.inventory(1)},
                        traits=['COMPUTE_MANAGED_PCI_DEVICE'])
    assert feed.run_cycle().requests == 9
    name, stats = client.reports[-1]
    assert name == 'compute-1' and stats['uuid'] == root
    assert 'CUSTOM_PCI_8086_1563' in stats['inventories']
    placement.change(pci, usages={'CUSTOM_PCI_8086_1563': 1})
    cycle = feed.run_cycle()
    assert (cycle.requests, cycle.reported) == (5, 1)
    assert client.reports[-1][1]['used'] == {'CUSTOM_PCI_8086_1563': 1}


def test_removed_child_and_removed_root(placement, client, feed):
    root = placement.add('compute-1', inventories=COMPUTE)
    child = placement.add('compute-1_pgpu', parent=root,
                          inventories={'VGPU': fakes.inventory(4)})
    feed.run_cycle()
    del placement.providers[child]
    assert feed.run_cycle().reported == 1
    assert 'VGPU' not in client.reports[-1][1]['inventories']
    del placement.providers[root]
    cycle = feed.run_cycle()
    assert (cycle.requests, cycle.reported) == (1, 1)
    assert client.reports[-1][1]['disabled'] is True
    assert feed.run_cycle().reported == 0


def test_provider_deleted_during_the_cycle_is_skipped(placement, feed):
    uuids = _cloud(placement, 3)
    original_get = placement.get

    def get_then_delete(url, **kwargs):
        response = original_get(url, **kwargs)
        if url == '/resource_providers':
            del placement.providers[uuids[1]]
        return response

    placement.get = get_then_delete
    cycle = feed.run_cycle()
    assert (cycle.read, cycle.reported) == (2, 2)


def test_failed_read_keeps_the_tree_dirty(placement, client, feed):
    uuids = _cloud(placement, 2)
    original_get = placement.get

    def failing(url, **kwargs):
        if url.endswith(uuids[1] + '/traits'):
            return fakes.FakeResponse(503)
        return original_get(url, **kwargs)

    placement.get = failing
    with pytest.raises(reader.PlacementError, match='503'):
        feed.run_cycle()
    placement.get = original_get
    cycle = feed.run_cycle()
    assert (cycle.read, cycle.reported) == (1, 2)


def test_reads_run_read_concurrency_at_a_time(placement, client):
    """Four providers' first reads all wait for each other: they only
    finish when four are in flight at once."""
    _cloud(placement, 4)
    together = threading.Barrier(4, timeout=10)
    original_get = placement.get

    def get(url, **kwargs):
        if url.endswith('/inventories'):
            together.wait()
        return original_get(url, **kwargs)

    placement.get = get
    feed = feed_mod.PlacementFeed(reader.PlacementReader(placement), client,
                                  ctxt=None, read_concurrency=4)
    cycle = feed.run_cycle()
    assert (cycle.requests, cycle.read, cycle.reported) == (17, 4, 4)


def test_read_concurrency_below_one_is_refused(placement, client):
    with pytest.raises(ValueError, match='read_concurrency'):
        feed_mod.PlacementFeed(reader.PlacementReader(placement), client,
                               ctxt=None, read_concurrency=0)


def test_unchanged_reports_are_resent_from_memory(placement, client, feed,
                                                  clock):
    _cloud(placement, 3)
    feed.run_cycle()
    clock.now += 10
    assert feed.run_cycle().resent == 0
    clock.now += 25
    cycle = feed.run_cycle()
    assert (cycle.requests, cycle.resent) == (1, 3)
    assert len(client.reports) == 6


def test_aggregates_follow_membership(placement, client, feed):
    uuids = _cloud(placement, 3)
    feed.run_cycle()
    hosts = {agg['uuid']: agg['hosts'] for agg in client.aggregates}
    assert hosts == {'agg-0': ['compute-000', 'compute-002'],
                     'agg-1': ['compute-001']}
    placement.change(uuids[1], aggregates=[])
    assert feed.run_cycle().aggregates == 1
    assert client.deleted_aggregates == ['agg-1']
    placement.change(uuids[0], usages={'VCPU': 1})
    assert feed.run_cycle().aggregates == 0


def test_aggregates_not_pushed_when_disabled(placement, client):
    _cloud(placement, 2)
    feed = feed_mod.PlacementFeed(reader.PlacementReader(placement), client,
                                  ctxt=None, push_aggregates=False)
    feed.run_cycle()
    assert client.aggregates == []


def test_root_that_becomes_a_child_is_folded_into_its_new_tree(
        placement, client, feed):
    first, second = _cloud(placement, 2)
    feed.run_cycle()
    placement.change(second, parent=first, root=first)
    cycle = feed.run_cycle()
    assert (cycle.read, cycle.reported) == (1, 2)
    reports = dict(client.reports[-2:])
    assert reports['compute-001']['disabled'] is True
    assert reports['compute-000']['vcpus'] == 32


def test_failed_cast_is_retried_next_cycle(placement, client, feed):
    uuids = _cloud(placement, 2)
    feed.run_cycle()
    placement.change(uuids[0], usages={'VCPU': 2},
                     aggregates=['agg-new'])
    sent = client.update_resource_stats
    client.update_resource_stats = mock.Mock(
        side_effect=ConnectionError('broker away'))
    with pytest.raises(ConnectionError):
        feed.run_cycle()
    client.update_resource_stats = sent
    cycle = feed.run_cycle()
    assert (cycle.requests, cycle.read, cycle.reported) == (1, 0, 1)
    assert client.reports[-1][1]['used'] == {'VCPU': 2}
    assert cycle.aggregates == 2      # agg-new, and agg-0 without it


def _swept_feed(placement, client, clock, sweep):
    return feed_mod.PlacementFeed(reader.PlacementReader(placement), client,
                                  ctxt=None, resend_interval=3600.0,
                                  clock=clock, usage_sweep_interval=sweep)


def test_a_deleted_allocation_moves_no_generation_but_is_swept(
        placement, client, clock):
    # Placement's DELETE /allocations/{consumer} leaves the generation
    uuids = _cloud(placement, 4)
    placement.change(uuids[1], usages={'VCPU': 4})
    feed = _swept_feed(placement, client, clock, sweep=60.0)
    feed.run_cycle()
    del client.reports[:]
    placement.providers[uuids[1]]['usages'] = {}
    clock.now += 10
    assert feed.run_cycle().reported == 0     # not due yet
    clock.now += 60
    # due: spread over the cycles, at least this cycle's share
    cycles = []
    while not client.reports:
        cycles.append(feed.run_cycle())
        clock.now += 10
        assert len(cycles) < 10
    name, stats = client.reports[-1]
    assert (name, stats['vcpus_used']) == ('compute-001', 0)
    # each cycle reads its share of one sweep, one request per provider
    assert all(c.requests == 1 + c.swept for c in cycles)


def test_usage_sweep_of_zero_reads_every_provider_every_cycle(
        placement, client, clock):
    _cloud(placement, 3)
    feed = _swept_feed(placement, client, clock, sweep=0)
    feed.run_cycle()
    cycle = feed.run_cycle()
    assert (cycle.swept, cycle.requests, cycle.reported) == (3, 4, 0)


class FakeNova:
    """Nova's API: the service host of each provider, and the services."""

    def __init__(self, hosts, serving, cpu_infos=None):
        self.hosts, self.serving_hosts = hosts, serving
        self.cpu_infos = cpu_infos or {}   # provider uuid -> cpu_info
        self.urls = []

    def get(self, url, microversion=None, raise_exc=True):
        self.urls.append(url)
        if url.startswith('/os-services'):
            return fakes.FakeResponse(200, {'services': [
                {'host': host, 'status': 'enabled', 'forced_down': False,
                 'state': 'up' if host in self.serving_hosts else 'down'}
                for host in set(self.hosts.values())]})
        uuid = url.rsplit('/', 1)[-1]
        host = self.hosts.get(uuid)
        if host is None:
            return fakes.FakeResponse(404, {})
        hypervisor = {'service': {'host': host}}
        if uuid in self.cpu_infos:
            hypervisor['cpu_info'] = self.cpu_infos[uuid]
        return fakes.FakeResponse(200, {'hypervisor': hypervisor})


def test_reports_name_the_compute_service_host_and_its_state(
        placement, client, clock):
    from scheduler.placement_feed import nova_hosts
    uuids = _cloud(placement, 3)
    sharing = placement.add('nfs', inventories={
        'DISK_GB': fakes.inventory(1000)})
    nova = FakeNova({uuids[0]: 'compute1', uuids[1]: 'compute2'},
                    serving={'compute1', 'compute2'})
    feed = feed_mod.PlacementFeed(
        reader.PlacementReader(placement), client, ctxt=None, clock=clock,
        hosts=nova_hosts.NovaHosts(nova))
    feed.run_cycle()
    names = {name if isinstance(name, str) else tuple(name): stats
             for name, stats in client.reports}
    assert set(names) == {('compute1', 'compute-000'),
                          ('compute2', 'compute-001'), 'compute-002', 'nfs'}
    # a compute provider Nova knows no compute node of (its service was
    # deleted) takes nothing; a sharing provider is not Nova's to know
    assert {name for name, stats in names.items() if stats['disabled']} \
        == {'compute-002'}
    # one hypervisor read per provider, ever; one services read a cycle
    assert sum('/os-hypervisors/' in url for url in nova.urls) == 4
    del client.reports[:]
    nova.serving_hosts = {'compute1'}          # compute2 went down
    feed.run_cycle()
    [(name, stats)] = client.reports
    assert (tuple(name), stats['disabled']) == (
        ('compute2', 'compute-001'), True)
    assert sum('/os-hypervisors/' in url for url in nova.urls) == 4
    assert sharing


def test_a_tree_named_after_its_provider_is_renamed_once_nova_answers(
        placement, client, clock):
    from scheduler.placement_feed import nova_hosts
    [uuid] = _cloud(placement, 1)
    nova = FakeNova({uuid: 'compute1'}, serving={'compute1'})
    answer = nova.get
    nova.get = lambda url, **kw: fakes.FakeResponse(503, {})
    hosts = nova_hosts.NovaHosts(nova, clock=clock)
    feed = feed_mod.PlacementFeed(reader.PlacementReader(placement), client,
                                  ctxt=None, clock=clock, hosts=hosts)
    feed.run_cycle()
    feed.run_cycle()
    assert [name for name, _ in client.reports] == ['compute-000']
    assert hosts.requests == 3      # one hypervisor read, then backed off
    nova.get = answer
    clock.now += nova_hosts.RETRY_AFTER
    feed.run_cycle()
    assert tuple(client.reports[-1][0]) == ('compute1', 'compute-000')


def test_a_compute_node_nova_maps_later_serves_once_nova_knows_it(
        placement, client, clock):
    # the compute's provider is in Placement before its host is mapped to
    # a cell (discover_hosts): until then Nova's API answers 404
    from scheduler.placement_feed import nova_hosts
    [uuid] = _cloud(placement, 1)
    nova = FakeNova({}, serving={'compute1'})
    hosts = nova_hosts.NovaHosts(nova, clock=clock)
    feed = feed_mod.PlacementFeed(reader.PlacementReader(placement), client,
                                  ctxt=None, clock=clock, hosts=hosts)
    feed.run_cycle()
    assert [(name, stats['disabled']) for name, stats in client.reports] \
        == [('compute-000', True)]
    feed.run_cycle()              # asked again only after a while
    assert hosts.requests == 3    # one hypervisor read, two services reads
    nova.hosts[uuid] = 'compute1'   # discover_hosts mapped it
    clock.now += nova_hosts.UNKNOWN_FIRST_RETRY
    feed.run_cycle()
    name, stats = client.reports[-1]
    assert (tuple(name), stats['disabled']) == (
        ('compute1', 'compute-000'), False)


def test_a_provider_nova_never_knows_is_asked_again_at_most_every_30_s(
        clock):
    from scheduler.placement_feed import nova_hosts
    nova = FakeNova({}, serving=set())
    hosts = nova_hosts.NovaHosts(nova, clock=clock)
    asked = []
    for _ in range(200):            # a cycle a second for 200 s
        hosts.host_of('nfs')
        asked.append(len(nova.urls))
        clock.now += 1.0
    times = [t for t in range(1, 200) if asked[t] > asked[t - 1]]
    assert times[:4] == [2, 6, 14, 30]
    assert all(b - a == nova_hosts.RETRY_AFTER
               for a, b in zip(times[4:], times[5:]))
    assert hosts.unknown('nfs')


def test_a_404_from_a_service_that_is_not_nova_disables_nothing(
        placement, client, clock):
    # an auth plugin with one fixed endpoint (admin_token) sends Nova's
    # requests to Placement, which knows neither URL
    from scheduler.placement_feed import nova_hosts
    _cloud(placement, 2)

    class Placement:
        @staticmethod
        def get(url, **kwargs):
            return fakes.FakeResponse(404, {'errors': []})

    feed = feed_mod.PlacementFeed(
        reader.PlacementReader(placement), client, ctxt=None, clock=clock,
        hosts=nova_hosts.NovaHosts(Placement()))
    feed.run_cycle()
    assert sorted((name, stats['disabled'])
                  for name, stats in client.reports) == [
        ('compute-000', False), ('compute-001', False)]


def test_a_host_without_an_arch_trait_gets_the_arch_nova_shows(
        placement, client, clock):
    # nova's fake and vmware drivers report no HW_ARCH_* trait; Nova's
    # API shows the hypervisor's cpu_info (a dict from microversion 2.28,
    # a JSON string before, free text for ironic)
    from scheduler.placement_feed import nova_hosts
    uuids = _cloud(placement, 4)
    nova = FakeNova(
        {uuid: 'compute%d' % i for i, uuid in enumerate(uuids)},
        serving={'compute%d' % i for i in range(4)},
        cpu_infos={uuids[0]: {'arch': 'x86_64', 'model': 'Nehalem'},
                   uuids[1]: '{"arch": "AArch64"}',
                   uuids[2]: 'baremetal cpu'})
    feed = feed_mod.PlacementFeed(
        reader.PlacementReader(placement), client, ctxt=None, clock=clock,
        hosts=nova_hosts.NovaHosts(nova))
    feed.run_cycle()
    assert {tuple(name)[0]: stats['supported_instances']
            for name, stats in client.reports} == {
        'compute0': [['x86_64']], 'compute1': [['aarch64']],
        'compute2': [[]], 'compute3': [[]]}
