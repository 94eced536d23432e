"""The cold load's columnar path builds the table row-by-row apply would,
and tracker attributes are decoded only when read."""

import numpy as np

from scheduler import objects
from scheduler.db import aggregates as db_aggregates
from scheduler.db import changes
from scheduler.db import claims
from scheduler.model import resource_classes as rcs
from scheduler.db import provider_reads
from scheduler.host_state import bulk
from scheduler.host_state.table import HostTable

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
C2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
C3 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e53'
A1 = '1a2b3c4d-0000-4000-8000-000000000001'


def _cloud(db):
    fakes.report(db, 'h1', vcpus=8, vcpus_used=3, availability_zone='az1',
                 hypervisor_type='QEMU')
    h2 = fakes.report(db, 'h2', 'n2', vcpus=16, disabled=True,
                      cpu_allocation_ratio=1.0)
    fakes.report(db, 'h3', memory_mb=4096, memory_mb_used=1000)
    claims.claim_resources(db, [claims.Claim(C1, h2, {rcs.VCPU: 5})])


def test_bulk_load_equals_row_by_row_apply(db):
    _cloud(db)
    by_rows = HostTable(default_zone='nova')
    by_rows.apply(provider_reads.load_changes(db))
    by_columns = HostTable(default_zone='nova')
    assert bulk.load(by_columns, *provider_reads.load_all(db)) == 3
    n = 3
    for name in ('provider_id', 'generation', 'disabled', 'reported_at',
                 'failed_builds'):
        assert np.array_equal(getattr(by_rows, name)[:n],
                              getattr(by_columns, name)[:n]), name
    for table in (by_rows, by_columns):
        order = np.argsort(table.provider_id[:n])
        table.zones = [table.az_names[table.az[r]] for r in order]
    assert by_rows.zones == by_columns.zones
    assert by_rows.hosts == by_columns.hosts
    assert by_rows.uuids == by_columns.uuids
    for rc in rcs.STANDARD:
        a, b = by_rows.resources[rc], by_columns.resources[rc]
        for name in a.NAMES + ('allocation_ratio', 'free'):
            assert np.array_equal(getattr(a, name)[:n],
                                  getattr(b, name)[:n]), (rc, name)
    for row in range(n):
        assert by_rows.attributes[row] == by_columns.attributes[row]
    assert by_columns.rows_of_host('h2') == by_rows.rows_of_host('h2')
    for node in ('h1', 'n2', 'h2', 'h3'):
        assert by_columns.rows_of_node(node) == by_rows.rows_of_node(node)
    assert by_columns.rows_of_node('n2') == by_columns.rows_of_host('h2')


def test_attributes_stay_text_until_read(db):
    _cloud(db)
    table = HostTable()
    bulk.load(table, *provider_reads.load_all(db))
    assert table.attributes._decoded == {}
    assert table.attributes[0]['hypervisor_type'] == 'QEMU'
    assert list(table.attributes._decoded) == [0]
    # a numeric column is built without keeping every row decoded
    assert table.column('vcpus').tolist() == [8.0, 16.0, 8.0]
    assert list(table.attributes._decoded) == [0]


def _compare(a, b):
    """Every column, label and description of two tables, row by row."""
    n = a.size
    assert b.size == n
    for name in ('provider_id', 'generation', 'disabled', 'reported_at',
                 'failed_builds', 'az'):
        assert np.array_equal(getattr(a, name)[:n],
                              getattr(b, name)[:n]), name
    assert set(a.resources) == set(b.resources)
    for rc in a.resources:
        x, y = a.resources[rc], b.resources[rc]
        for name in x.NAMES + ('allocation_ratio', 'free', 'assumed'):
            assert np.array_equal(getattr(x, name)[:n],
                                  getattr(y, name)[:n]), (rc, name)
        assert x.stepped == y.stepped
    assert [a.labels.kind_names[k] for k in a.labels.kind[:n]] == \
        [b.labels.kind_names[k] for k in b.labels.kind[:n]]
    assert a.az_names == b.az_names
    assert a.hosts == b.hosts and a.reported_zones == b.reported_zones
    for row in range(n):
        assert a.attributes[row] == b.attributes[row]
    assert np.array_equal(a.column('vcpus'), b.column('vcpus'))


def test_poll_apply_equals_row_by_row_apply(db):
    """The poller's columnar apply of changed rows (a claim, a report
    changing zone, attributes and usage, a new provider) gives the table
    the per-row apply gives."""
    _cloud(db)
    tables = [HostTable(default_zone='nova') for _ in range(2)]
    for table in tables:
        bulk.load(table, *provider_reads.load_all(db))
        table.column('vcpus')  # an attribute column kept up to date
    with db.reader() as session:
        since = changes.position(session)
    h1 = provider_reads.find_provider(db, 'h1')['id']
    claims.claim_resources(db, [claims.Claim(C2, h1, {rcs.VCPU: 2})])
    fakes.report(db, 'h3', memory_mb=4096, memory_mb_used=2000,
                 availability_zone='az2', vcpus=12)
    fakes.report(db, 'h4', vcpus=4)
    reader = db.raw_reader()
    with reader.cursor() as cursor:
        until = changes.poll_position(cursor, reader.dialect)
        rows = provider_reads.read_changed(cursor, reader.dialect, since,
                                           until)
    assert len(rows[0]) == 3
    tables[0].apply(provider_reads.load_changes(db, since=since, until=until))
    assert bulk.apply_changes(tables[1], *rows) == 3
    _compare(*tables)
    assert tables[1].column('vcpus').tolist() == [8.0, 16.0, 12.0, 4.0]
    # a row whose usage alone changed again: still the same table
    claims.claim_resources(db, [claims.Claim(C3, h1, {rcs.VCPU: 1})])
    with reader.cursor() as cursor:
        rows = provider_reads.read_changed(
            cursor, reader.dialect, until,
            changes.poll_position(cursor, reader.dialect))
    assert len(rows[0]) == 1
    tables[0].apply(provider_reads.load_changes(db, provider_ids=[h1]))
    bulk.apply_changes(tables[1], *rows)
    _compare(*tables)


def test_poll_apply_leaves_a_row_confirmed_since_for_a_reread(db):
    _cloud(db)
    table = HostTable()
    bulk.load(table, *provider_reads.load_all(db))
    h1 = provider_reads.find_provider(db, 'h1')['id']
    row = table.row_of(h1)
    epoch = table.confirm_epoch
    table.assume(row, {rcs.VCPU: 1})
    table.confirm(row, {rcs.VCPU: 1})
    before = int(table.resources[rcs.VCPU].claimed[row])
    reader = db.raw_reader()
    with reader.cursor() as cursor:
        rows = provider_reads.read_changed(cursor, reader.dialect,
                                           provider_ids=[h1])
    bulk.apply_changes(table, *rows, read_epoch=epoch)
    assert int(table.resources[rcs.VCPU].claimed[row]) == before
    assert table.take_dirty() == {h1}


def _vcpus_limit(table, rows):
    vcpu = table.resources[rcs.VCPU]
    return vcpu.total[rows] * vcpu.allocation_ratio[rows]


def _poll_and_compare(db, since, tables):
    """Apply what changed since ``since`` to ``tables`` (row by row to
    the first, as the poller does to the second) and compare them."""
    reader = db.raw_reader()
    with reader.cursor() as cursor:
        until = changes.poll_position(cursor, reader.dialect)
        rows = provider_reads.read_changed(cursor, reader.dialect, since,
                                           until)
    tables[0].apply(provider_reads.load_changes(db, since=since, until=until))
    bulk.apply_changes(tables[1], *rows)
    _compare(*tables)
    for table in tables:
        assert table.report_column('limit', _vcpus_limit) is not None
    assert np.array_equal(tables[0].report_column('limit', _vcpus_limit),
                          tables[1].report_column('limit', _vcpus_limit))
    return until


def test_poll_apply_takes_a_ratio_changed_without_a_report(db):
    """An aggregate's allocation ratio changes a host's inventories with
    no report (its report time stays): the change is applied, and the
    columns derived from reports with it, even where the capacity does
    not move (all CPUs reserved)."""
    db.aggregate_allocation_ratios = True
    fakes.report(db, 'h1', vcpus=8, reserved_host_cpus=8)
    fakes.report(db, 'h2', vcpus=8)
    tables = [HostTable(default_zone='nova') for _ in range(2)]
    for table in tables:
        bulk.load(table, *provider_reads.load_all(db))
        table.report_column('limit', _vcpus_limit)
    with db.reader() as session:
        since = changes.position(session)
    [row] = tables[1].rows_of_host('h1')
    reported = tables[1].report_column('limit', _vcpus_limit)[row]
    db_aggregates.save_aggregates(db, [objects.Aggregate(
        uuid=A1, name='a', hosts=['h1'],
        metadata={'cpu_allocation_ratio': '2'})])
    since = _poll_and_compare(db, since, tables)
    assert reported != 16.0
    assert tables[1].resources[rcs.VCPU].allocation_ratio[row] == 2.0
    assert tables[1].report_column('limit', _vcpus_limit)[row] == 16.0
    # and back, while a claim lands on the other host (a batch of both)
    db_aggregates.delete_aggregate(db, A1)
    h2 = provider_reads.find_provider(db, 'h2')['id']
    claims.claim_resources(db, [claims.Claim(C3, h2, {rcs.VCPU: 1})])
    _poll_and_compare(db, since, tables)
    assert tables[1].report_column('limit', _vcpus_limit)[row] == reported


def test_poll_apply_of_usage_only_rows_keeps_tentative_claims(db):
    """Rows that only changed usage (the fast path) keep the worker's
    tentative claims in their free amounts, and a row whose claim this
    worker confirmed after the read is left as it is, for a re-read."""
    _cloud(db)
    table = HostTable()
    bulk.load(table, *provider_reads.load_all(db))
    h1 = provider_reads.find_provider(db, 'h1')['id']
    h3 = provider_reads.find_provider(db, 'h3')['id']
    epoch = table.confirm_epoch
    claims.claim_resources(db, [claims.Claim(C2, h1, {rcs.VCPU: 2})])
    reader = db.raw_reader()
    with reader.cursor() as cursor:
        rows = provider_reads.read_changed(cursor, reader.dialect,
                                           provider_ids=[h1, h3])
    row1, row3 = table.row_of(h1), table.row_of(h3)
    table.assume(row1, {rcs.VCPU: 1})
    # this worker's claim on h3, committed and confirmed after the read
    table.assume(row3, {rcs.VCPU: 1})
    table.confirm(row3, {rcs.VCPU: 1})
    vcpu = table.resources[rcs.VCPU]
    free3 = int(vcpu.free[row3])
    bulk.apply_changes(table, *rows, read_epoch=epoch)
    # h1 reports 3 VCPUs used: 2 claimed + 1 assumed count as much
    assert int(vcpu.claimed[row1]) == 2
    assert int(vcpu.free[row1]) == int(vcpu.capacity[row1]) - 3
    assert (int(vcpu.claimed[row3]), int(vcpu.free[row3])) == (1, free3)
    assert table.take_dirty() == {h3}
