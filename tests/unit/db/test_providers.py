"""Provider writes and reads: a tracker report becomes a provider and its
inventories; reports older than the stored one are ignored; load_changes
returns only what changed."""

import datetime
import json

import pytest
from oslo_utils import timeutils

from scheduler.db import claims
from scheduler import exception
from scheduler.model import resource_classes as rcs
from scheduler.db import changes
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads

from .. import fakes


def _at(minute):
    return datetime.datetime(2026, 3, 1, 12, minute,
                             tzinfo=datetime.timezone.utc)


def _record(db, host, node=None, **stats):
    return db_providers.record_compute_node(
        db, fakes.compute_node(host, node, **stats), fakes.RATIO_DEFAULTS)


def test_report_creates_provider_with_inventories(db):
    assert _record(db, 'h1', 'n1', vcpus_used=2, reserved_host_cpus=1,
                   ram_allocation_ratio=1.5, availability_zone='az1',
                   hypervisor_type='QEMU', updated_at=_at(0))
    [provider] = provider_reads.list_providers(db)
    assert (provider['host'], provider['nodename']) == ('h1', 'n1')
    assert provider['availability_zone'] == 'az1'
    assert provider['reported_at'] == _at(0).replace(tzinfo=None)
    assert json.loads(provider['attributes'])['hypervisor_type'] == 'QEMU'
    vcpu = provider['inventories'][rcs.VCPU]
    # (8 - 1 reserved) * 4.0 default ratio
    assert (vcpu['total'], vcpu['reserved'], vcpu['capacity'],
            vcpu['reported_used'], vcpu['claimed']) == (8, 1, 28, 2, 0)
    assert provider['inventories'][rcs.MEMORY_MB]['capacity'] == 24576


def test_zero_ratio_means_the_default(db):
    _record(db, 'h1', cpu_allocation_ratio=0.0)
    [provider] = provider_reads.list_providers(db)
    assert provider['inventories'][rcs.VCPU]['allocation_ratio'] == 4.0


def test_newer_report_updates_in_place(db):
    _record(db, 'h1', updated_at=_at(0))
    first = provider_reads.list_providers(db)[0]
    assert _record(db, 'h1', vcpus=16, updated_at=_at(1))
    [second] = provider_reads.list_providers(db)
    assert second['id'] == first['id'] and second['uuid'] == first['uuid']
    assert second['generation'] > first['generation']
    assert second['inventories'][rcs.VCPU]['total'] == 16


def test_older_or_repeated_report_is_ignored(db):
    _record(db, 'h1', vcpus=16, updated_at=_at(5))
    before = provider_reads.list_providers(db)[0]
    assert not _record(db, 'h1', vcpus=2, updated_at=_at(4))
    assert not _record(db, 'h1', vcpus=2, updated_at=_at(5))
    [after] = provider_reads.list_providers(db)
    assert after['inventories'][rcs.VCPU]['total'] == 16
    assert after['generation'] == before['generation']


def _mark(db):
    with db.reader() as session:
        return changes.position(session)


def test_load_changes_since(db):
    _record(db, 'h1')
    _record(db, 'h2')
    rows = provider_reads.load_changes(db)
    assert sorted(r['host'] for r in rows) == ['h1', 'h2']
    mark = _mark(db)
    assert provider_reads.load_changes(db, since=mark) == []
    _record(db, 'h2', vcpus=2)
    rows = provider_reads.load_changes(db, since=mark, until=_mark(db))
    assert [r['host'] for r in rows] == ['h2']
    assert set(rows[0]['inventories']) == {rcs.VCPU, rcs.MEMORY_MB,
                                           rcs.DISK_GB}


def test_load_changes_of_given_providers(db):
    _record(db, 'h1')
    _record(db, 'h2')
    h2 = provider_reads.find_provider(db, 'h2')['id']
    rows = provider_reads.load_changes(db, provider_ids=[h2])
    assert [r['host'] for r in rows] == ['h2']


def _absorb(db, second, **stats):
    node = fakes.compute_node('h1', updated_at=_at(0) + datetime.timedelta(
        seconds=second), **stats)
    return db_providers.absorb_reports(db, [node], fakes.RATIO_DEFAULTS,
                                       fresh_for=30)


def test_a_report_that_repeats_the_stored_one_writes_nothing(db):
    assert _absorb(db, 0, vcpus_used=1) == (1, 0)
    before, mark = provider_reads.list_providers(db)[0], _mark(db)
    assert _absorb(db, 10, vcpus_used=1) == (0, 1)
    [after] = provider_reads.list_providers(db)
    assert after == before
    assert _mark(db) == mark            # no feed stamp: nobody re-reads


def test_a_changed_or_heartbeat_report_is_written(db):
    _absorb(db, 0, vcpus_used=1)
    mark = _mark(db)
    assert _absorb(db, 10, vcpus_used=2) == (1, 0)       # usage drifted
    [changed] = provider_reads.load_changes(db, since=mark)
    assert changed['inventories'][rcs.VCPU]['reported_used'] == 2
    mark = _mark(db)
    # the same again, but the stored one is older than fresh_for: the
    # ComputeFilter reads that time, so it is written
    assert _absorb(db, 41, vcpus_used=2) == (1, 0)
    [heartbeat] = provider_reads.load_changes(db, since=mark)
    assert heartbeat['reported_at'] == (
        _at(0) + datetime.timedelta(seconds=41)).replace(tzinfo=None)


def test_an_older_report_is_neither_written_nor_unchanged(db):
    _absorb(db, 10)
    assert _absorb(db, 5) == (0, 0)


def test_find_provider_by_host_or_node(db):
    _record(db, 'h1', 'node-a')
    assert provider_reads.find_provider(db, 'h1')['nodename'] == 'node-a'
    assert provider_reads.find_provider(db, 'node-a')['host'] == 'h1'
    assert provider_reads.find_provider(db, 'nope') is None


def test_new_hosts_of_a_batch_cost_two_inserts_not_one_per_row(db):
    import sqlalchemy as sa
    statements = []

    def count(conn, cursor, statement, *args):
        statements.append(statement.split(None, 3)[:3])

    nodes = [fakes.compute_node('bulk-%02d' % i, 'n', vcpus=4 + i,
                                updated_at=_at(0)) for i in range(20)]
    sa.event.listen(db.engine, 'before_cursor_execute', count)
    try:
        db_providers.record_compute_nodes(db, nodes, fakes.RATIO_DEFAULTS)
    finally:
        sa.event.remove(db.engine, 'before_cursor_execute', count)
    inserts = [s for s in statements if s[:2] == ['INSERT', 'INTO']]
    assert sorted(s[2] for s in inserts) == ['inventories', 'providers'], \
        inserts
    stored = {p['host']: p for p in provider_reads.list_providers(db)}
    assert len(stored) == 20
    # each host got its own inventories, in the order of the batch
    for i in range(20):
        vcpu = stored['bulk-%02d' % i]['inventories'][rcs.VCPU]
        assert vcpu['total'] == 4 + i


_PINNED = json.dumps({'cells': [{'id': 0, 'cpuset': [0, 1], 'pcpus': [2, 3],
                                 'memory': 4096, 'pinned_cpus': [2]}]})


def test_a_class_no_longer_reported_is_withdrawn(db):
    """A host that stops offering dedicated CPUs keeps no PCPU capacity;
    its claims still count, and a repeated report is still unchanged."""
    assert _absorb(db, 0, numa_topology=_PINNED) == (1, 0)
    [host] = provider_reads.list_providers(db)
    assert host['inventories'][rcs.PCPU]['capacity'] == 2
    claims.claim_resources(db, [claims.Claim(
        '9b0d3c1e-4f5a-4b6c-8d7e-0f1a2b3c4d5e', host['id'],
        {rcs.PCPU: 1})])
    assert _absorb(db, 10) == (1, 0)
    [host] = provider_reads.list_providers(db)
    pcpu = host['inventories'][rcs.PCPU]
    assert (pcpu['total'], pcpu['capacity'], pcpu['claimed']) == (0, 0, 1)
    assert _absorb(db, 20) == (0, 1)        # nothing changed since
    with pytest.raises(exception.ClaimConflict):
        claims.claim_resources(db, [claims.Claim(
            '9b0d3c1e-4f5a-4b6c-8d7e-0f1a2b3c4d5f', host['id'],
            {rcs.PCPU: 1})])
    # offered again: capacity again, the claim still counted
    assert _absorb(db, 30, numa_topology=_PINNED) == (1, 0)
    [host] = provider_reads.list_providers(db)
    pcpu = host['inventories'][rcs.PCPU]
    assert (pcpu['capacity'], pcpu['claimed']) == (2, 1)


def test_a_report_from_the_future_does_not_freeze_its_host(db):
    """A tracker's clock 290 s ahead (within max_clock_skew): its report
    is stored as made now, and the next report of a correct clock wins."""
    now = datetime.datetime.now(datetime.timezone.utc)
    assert _record(db, 'h1', vcpus_used=1,
                   updated_at=now + datetime.timedelta(seconds=290))
    [stored] = provider_reads.list_providers(db)
    assert stored['reported_at'] <= timeutils.utcnow()
    assert _record(db, 'h1', vcpus_used=2, updated_at=datetime.datetime.now(
        datetime.timezone.utc))
    [provider] = provider_reads.list_providers(db)
    assert provider['inventories'][rcs.VCPU]['reported_used'] == 2


def test_a_provider_reported_under_a_new_name_is_renamed_in_place(db):
    # the Placement feed reports a compute node's tree under its
    # provider's name until Nova's API knows its service host
    uuid = '11111111-2222-3333-4444-555555555555'
    _record(db, 'fake-mini', 'fake-mini', uuid=uuid, disabled=True,
            updated_at=_at(0))
    [first] = provider_reads.list_providers(db)
    claims.claim_resources(db, [claims.Claim(
        'c1', first['id'], {rcs.VCPU: 2}, 'fake-mini')])
    assert _record(db, 'compute', 'fake-mini', uuid=uuid, vcpus=16,
                   updated_at=_at(1))
    [second] = provider_reads.list_providers(db)
    assert (second['id'], second['uuid']) == (first['id'], uuid)
    assert (second['host'], second['nodename'], second['disabled']) == (
        'compute', 'fake-mini', False)
    assert second['inventories'][rcs.VCPU]['total'] == 16
    assert second['inventories'][rcs.VCPU]['claimed'] == 2
    # a report under the old name, older than the rename, renames nothing
    _record(db, 'fake-mini', 'fake-mini', uuid=uuid, updated_at=_at(0))
    assert [(p['host'], p['nodename']) for p in
            provider_reads.list_providers(db)] == [('compute', 'fake-mini')]
