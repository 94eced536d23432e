"""The cold load's columnar path builds the table row-by-row apply would,
and tracker attributes are decoded only when read."""

import numpy as np

from scheduler.db import claims
from scheduler.model import resource_classes as rcs
from scheduler.db import providers as db_providers
from scheduler.host_state import bulk
from scheduler.host_state.table import HostTable

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'


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
    by_rows.apply(db_providers.load_changes(db))
    by_columns = HostTable(default_zone='nova')
    assert bulk.load(by_columns, *db_providers.load_all(db)) == 3
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
    bulk.load(table, *db_providers.load_all(db))
    assert table.attributes._decoded == {}
    assert table.attributes[0]['hypervisor_type'] == 'QEMU'
    assert list(table.attributes._decoded) == [0]
    # a numeric column is built without keeping every row decoded
    assert table.column('vcpus').tolist() == [8.0, 16.0, 8.0]
    assert list(table.attributes._decoded) == [0]
