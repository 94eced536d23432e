"""Generic tracker reports: what is accepted, what is refused (naming the
field), what the database and a worker's host table then hold."""

import numpy as np
import pytest

from scheduler.service import composition
from scheduler import exception
from scheduler import objects
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler.host_state import HostStateCache

from .. import fakes

STORAGE = {
    'kind': 'storage',
    'inventories': {'DISK_GB': {'total': 10000, 'reserved': 100,
                                'allocation_ratio': 1.5},
                    'CUSTOM_IOPS': {'total': 50000, 'step_size': 100}},
    'used': {'DISK_GB': 1200},
    'traits': ['STORAGE_DISK_SSD', 'CUSTOM_REPLICATED'],
    'locality': {'availability_zone': 'az1', 'row': 'w1', 'rack': 'r7'},
}


def _node(name='cinder1', **stats):
    return objects.ComputeNode.from_stats(name, name, dict(STORAGE, **stats))


def test_storage_report_is_stored_with_its_kind_and_classes(db):
    db_providers.record_compute_node(db, _node(), fakes.RATIO_DEFAULTS)
    [row] = provider_reads.list_providers(db)
    assert row['kind'] == 'storage'
    assert row['availability_zone'] == 'az1'
    assert sorted(row['inventories']) == ['CUSTOM_IOPS', 'DISK_GB']
    disk = row['inventories']['DISK_GB']
    assert (disk['capacity'], disk['reported_used'], disk['max_unit']) == (
        14850, 1200, 10000)
    assert row['inventories']['CUSTOM_IOPS']['step_size'] == 100


def test_compute_report_keeps_its_classic_rows_and_adds_custom_ones(db):
    node = fakes.compute_node('h1', traits=['HW_CPU_X86_AVX2'],
                              inventories={'CUSTOM_FPGA': {'total': 2}},
                              used={'CUSTOM_FPGA': 1})
    db_providers.record_compute_node(db, node, fakes.RATIO_DEFAULTS)
    [row] = provider_reads.list_providers(db)
    assert row['kind'] == 'compute'
    assert sorted(row['inventories']) == ['CUSTOM_FPGA', 'DISK_GB',
                                          'MEMORY_MB', 'VCPU']
    assert row['inventories']['VCPU']['capacity'] == 32


def test_host_table_has_kind_trait_and_locality_columns(db):
    db_providers.record_compute_node(db, _node('cinder1'),
                                     fakes.RATIO_DEFAULTS)
    db_providers.record_compute_node(
        db, _node('cinder2', traits=[], locality={'rack': 'r8'}),
        fakes.RATIO_DEFAULTS)
    fakes.report(db, 'h1', locality={'rack': 'r7'})
    cache = HostStateCache(db)
    cache.refresh()
    table = cache.table
    labels = table.labels
    rows = [table.hosts.index(h) for h in ('cinder1', 'cinder2', 'h1')]
    assert list(labels.of_kind('storage', table.size)[rows]) == [
        True, True, False]
    assert list(labels.has_trait('STORAGE_DISK_SSD', table.size)[rows]) \
        == [True, False, False]
    racks = labels.locality('rack', table.size)[rows]
    assert racks[0] == racks[2] != racks[1]
    assert labels.locality('row', table.size)[rows][1] == -1
    assert isinstance(labels.kind, np.ndarray)


def test_a_new_report_replaces_traits_and_locality(db):
    db_providers.record_compute_node(db, _node(), fakes.RATIO_DEFAULTS)
    cache = HostStateCache(db)
    cache.refresh()
    node = _node(traits=['CUSTOM_GOLD'], locality={'rack': 'r9'})
    node.updated_at = None
    db_providers.record_compute_node(db, node, fakes.RATIO_DEFAULTS,
                                     now=fakes.NOW.replace(year=2030))
    cache.refresh()
    size, labels = cache.table.size, cache.table.labels
    assert not labels.has_trait('STORAGE_DISK_SSD', size)[0]
    assert labels.has_trait('CUSTOM_GOLD', size)[0]
    assert labels.locality('row', size)[0] == -1


@pytest.mark.parametrize('stats, field', [
    ({'inventories': {'IOPS': {'total': 1}}}, 'stats.inventories.IOPS'),
    ({'inventories': {'CUSTOM_iops': {'total': 1}}},
     'stats.inventories.CUSTOM_iops'),
    ({'inventories': {'DISK_GB': {'size': 1, 'total': 1}}},
     'stats.inventories.DISK_GB.size'),
    ({'inventories': {'DISK_GB': {}}}, 'stats.inventories.DISK_GB.total'),
    ({'inventories': {'DISK_GB': {'total': 1.5}}},
     'stats.inventories.DISK_GB.total'),
    ({'used': {'VCPU': 1}}, 'stats.used.VCPU'),
    ({'traits': ['SSD']}, 'stats.traits[0]'),
    ({'traits': ['CUSTOM_ssd']}, 'stats.traits[0]'),
    ({'kind': 'Storage Pool'}, 'stats.kind'),
    ({'locality': {'Rack': 'r1'}}, 'stats.locality.Rack'),
])
def test_bad_names_and_amounts_are_refused(stats, field):
    with pytest.raises(exception.InvalidField) as exc:
        _node(**stats)
    assert exc.value.kwargs['field'] == field


def test_manager_accepts_a_generic_report(conf, db):
    from scheduler import context as sched_context
    manager = composition.build_manager(conf, db)
    try:
        manager.update_resource_stats(
            sched_context.RequestContext(roles=['service']),
            ['cinder1', 'pool1'], dict(STORAGE))
        manager.report_writer.flush()
    finally:
        manager.stop()
    [row] = provider_reads.list_providers(db)
    assert (row['host'], row['nodename'], row['kind']) == (
        'cinder1', 'pool1', 'storage')


def test_a_batch_of_updates_stores_the_new_kind(db):
    db_providers.record_compute_node(db, _node(), fakes.RATIO_DEFAULTS)
    node = _node(kind='share')
    node.updated_at = fakes.NOW.replace(year=2030)
    db_providers.record_compute_nodes(db, [node], fakes.RATIO_DEFAULTS)
    [row] = provider_reads.list_providers(db)
    assert row['kind'] == 'share'
