"""Kind, trait and locality columns: the cold load's columnar path labels
rows as row-by-row apply does, a changed report relabels its row, and a
report without traits or locality stores neither (so the cold load need
not decode its JSON to label it)."""

import numpy as np

from scheduler import objects
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler.host_state import bulk
from scheduler.host_state.table import HostTable

from .. import fakes


def _report(db, name, **stats):
    node = objects.ComputeNode.from_stats(name, name, stats)
    db_providers.record_compute_node(db, node, fakes.RATIO_DEFAULTS)


def _cloud(db):
    fakes.report(db, 'h1', locality={'rack': 'r1', 'row': 'w1'})
    fakes.report(db, 'h2')
    _report(db, 'vol1', kind='storage', traits=['STORAGE_DISK_SSD'],
            inventories={'DISK_GB': {'total': 10}}, locality={'rack': 'r1'})
    _report(db, 'net1', kind='network', locality={'row': 'w1'},
            inventories={'NET_BW_EGR_KILOBIT_PER_SEC': {'total': 10}})


def _labels(table):
    """Per host: kind, SSD trait, rack name, row name, host id set."""
    labels, n = table.labels, table.size
    racks = labels.locality('rack', n)
    rows = labels.locality('row', n)
    out = {}
    for row, host in enumerate(table.hosts[:n]):
        out[host] = (labels.kind_names[labels.kind[row]],
                     bool(labels.has_trait('STORAGE_DISK_SSD', n)[row]),
                     int(racks[row]) >= 0, int(rows[row]) >= 0,
                     int(labels.locality('host', n)[row]) >= 0)
    return out, racks, rows


def test_bulk_load_labels_as_row_by_row_apply(db):
    _cloud(db)
    by_rows = HostTable()
    by_rows.apply(provider_reads.load_changes(db))
    by_columns = HostTable()
    bulk.load(by_columns, *provider_reads.load_all(db))
    expected = {'h1': ('compute', False, True, True, True),
                'h2': ('compute', False, False, False, True),
                'vol1': ('storage', True, True, False, True),
                'net1': ('network', False, False, True, True)}
    for table in (by_rows, by_columns):
        labels, racks, rows = _labels(table)
        assert labels == expected
        h1, vol1, net1 = (table.hosts.index(h) for h in ('h1', 'vol1',
                                                         'net1'))
        assert racks[h1] == racks[vol1] and rows[h1] == rows[net1]
    # a report without traits or locality stores neither: the cold load
    # labels such rows without decoding their JSON
    raw = {p[2]: p[8] for p in provider_reads.load_all(db)[0]}
    assert '"traits"' not in raw['h2'] and '"locality"' not in raw['h2']
    assert '"traits": ["' in raw['vol1']


def test_a_changed_report_relabels_its_row(db):
    _cloud(db)
    table = HostTable()
    bulk.load(table, *provider_reads.load_all(db))
    node = objects.ComputeNode.from_stats('vol1', 'vol1', {
        'kind': 'storage', 'inventories': {'DISK_GB': {'total': 10}},
        'traits': ['CUSTOM_GOLD'], 'locality': {'rack': 'r2'}})
    node.updated_at = fakes.NOW.replace(year=2030)
    db_providers.record_compute_node(db, node, fakes.RATIO_DEFAULTS)
    table.apply(provider_reads.load_changes(db))
    row, n = table.hosts.index('vol1'), table.size
    assert not table.labels.has_trait('STORAGE_DISK_SSD', n)[row]
    assert table.labels.has_trait('CUSTOM_GOLD', n)[row]
    racks = table.labels.locality('rack', n)
    assert racks[row] != racks[table.hosts.index('h1')]
    assert np.count_nonzero(table.labels.of_kind('storage', n)) == 1
