"""HostTable: rows appended once, updated in place, grown past the initial
capacity without losing data; free() is capacity minus
max(reported_used, claimed)."""

import numpy as np
import pytest

from scheduler.model import resource_classes as rcs

from .. import fakes
from ..filters import hosts as filter_hosts


def test_apply_appends_new_providers_in_order():
    table = fakes.host_table(fakes.provider(10, 'h1'),
                             fakes.provider(20, 'h2', 'h2-node'))
    assert table.size == 2
    assert table.hosts == ['h1', 'h2']
    assert table.nodenames == ['h1', 'h2-node']
    assert (table.row_of(10), table.row_of(20), table.row_of(30)) == (
        0, 1, None)
    assert table.provider_id[:2].tolist() == [10, 20]


def test_update_is_in_place_and_row_index_stays(conf):
    table = fakes.host_table(fakes.provider(10, 'h1'),
                             fakes.provider(20, 'h2'))
    table.apply([fakes.provider(10, 'h1', vcpus_used=5, disabled=True,
                                availability_zone='az9', generation=3)])
    assert table.size == 2
    assert table.row_of(10) == 0
    assert table.hosts == ['h1', 'h2']
    assert table.rows_of_host('h1') == [0]
    assert bool(table.disabled[0]) and not table.disabled[1]
    assert table.generation[0] == 3
    assert table.resources[rcs.VCPU].reported_used[:2].tolist() == [5, 0]
    assert table.view(0).availability_zone == 'az9'


def test_table_grows_past_initial_capacity_keeping_every_row():
    providers = [fakes.provider(i + 1, 'h%03d' % i, vcpus=i + 1,
                                vcpus_used=i, cpu_allocation_ratio=1.0,
                                disabled=i % 2 == 1, generation=i,
                                availability_zone='az%d' % (i % 3))
                 for i in range(150)]
    table = fakes.host_table(*providers[:64])
    table.apply(providers[64:])
    assert table.size == 150
    assert table.provider_id[:150].tolist() == list(range(1, 151))
    assert table.generation[:150].tolist() == list(range(150))
    assert table.disabled[:150].tolist() == [i % 2 == 1 for i in range(150)]
    assert [table.view(r).availability_zone for r in (0, 1, 2, 63, 64)] \
        == ['az0', 'az1', 'az2', 'az0', 'az1']
    assert set(table.reported_at[:150].tolist()) == {fakes.NOW_TS}
    free = table.free(rcs.VCPU)
    assert len(free) == 150
    assert free.tolist() == [1] * 150
    assert table.resources[rcs.VCPU].total[:150].tolist() == list(
        range(1, 151))
    assert table.row_of(150) == 149 and table.hosts[149] == 'h149'
    # an update after growing still lands on the same row
    table.apply([fakes.provider(1, 'h000', vcpus=1, vcpus_used=1,
                                cpu_allocation_ratio=1.0)])
    assert table.free(rcs.VCPU, [0, 149]).tolist() == [0, 1]


def test_free_is_capacity_minus_larger_usage():
    table = fakes.host_table(
        fakes.provider(1, 'reported', vcpus_used=10),
        fakes.provider(2, 'claimed', vcpus_used=2, claimed={rcs.VCPU: 12}),
        fakes.provider(3, 'empty'))
    # 8 VCPUs at ratio 4.0: capacity 32
    assert table.free(rcs.VCPU).tolist() == [22, 20, 32]
    assert table.free(rcs.VCPU, np.array([2, 0])).tolist() == [32, 22]


def test_free_of_unknown_resource_class_is_zero():
    table = fakes.host_table(fakes.provider(1, 'h1'),
                             fakes.provider(2, 'h2'))
    assert table.free('CUSTOM_GPU').tolist() == [0, 0]
    assert table.free('CUSTOM_GPU', [1]).tolist() == [0]
    assert not table.fits(0, {'CUSTOM_GPU': 1})


def test_add_claim_counts_until_the_row_is_reloaded():
    provider = fakes.provider(1, 'h1', vcpus=2, cpu_allocation_ratio=1.0)
    table = fakes.host_table(provider)
    assert table.fits(0, {rcs.VCPU: 2})
    table.add_claim(0, {rcs.VCPU: 2})
    assert not table.fits(0, {rcs.VCPU: 1})
    assert table.free(rcs.VCPU).tolist() == [0]
    table.apply([provider])
    assert table.free(rcs.VCPU).tolist() == [2]


def test_a_confirmed_claim_moves_from_assumed_to_claimed_free_unchanged():
    table = fakes.host_table(fakes.provider(
        1, 'h1', vcpus=8, vcpus_used=3, cpu_allocation_ratio=1.0,
        claimed={rcs.VCPU: 2}))
    columns = table.resources[rcs.VCPU]
    table.assume(0, {rcs.VCPU: 4})
    # usage: the larger of reported 3 and claimed 2 + assumed 4
    assert table.free(rcs.VCPU).tolist() == [2]
    table.confirm(0, {rcs.VCPU: 4})
    assert (columns.assumed[0], columns.claimed[0]) == (0, 6)
    assert table.free(rcs.VCPU).tolist() == [2]


def test_inventory_that_disappears_is_zeroed():
    with_disk = fakes.provider(1, 'h1')
    table = fakes.host_table(with_disk)
    without_disk = dict(with_disk, inventories={
        rc: inv for rc, inv in with_disk['inventories'].items()
        if rc != rcs.DISK_GB})
    table.apply([without_disk])
    assert table.free(rcs.DISK_GB).tolist() == [0]
    assert not table.fits(0, {rcs.DISK_GB: 1})


def test_hosts_with_several_nodes():
    table = fakes.host_table(fakes.provider(1, 'h1', 'n1'),
                             fakes.provider(2, 'h2', 'n2'),
                             fakes.provider(3, 'h1', 'n3'))
    assert table.rows_of_host('h1') == [0, 2]
    assert table.rows_of_host('nope') == []


def test_availability_zone_index():
    table = fakes.host_table(
        fakes.provider(1, 'h1', availability_zone='az1'),
        fakes.provider(2, 'h2', availability_zone='az2'),
        fakes.provider(3, 'h3', availability_zone='az1'))
    assert table.az[0] == table.az[2] == table.az_lookup('az1')
    assert table.az[1] == table.az_lookup('az2') != table.az[0]
    assert table.az_lookup('never-seen') == -1


def test_host_view_reads_one_row():
    table = fakes.host_table(
        fakes.provider(1, 'h1'),
        fakes.provider(2, 'h2', 'n2', availability_zone='az1',
                       disabled=True, vcpus_used=3))
    table.apply([dict(fakes.provider(2, 'h2', 'n2', availability_zone='az1',
                                     disabled=True, vcpus_used=3),
                      attributes='{"hypervisor_type": "QEMU"}')])
    view = table.view(1)
    assert (view.host, view.nodename, view.availability_zone) == (
        'h2', 'n2', 'az1')
    assert view.uuid == table.uuids[1]
    assert view.disabled is True
    assert view.attributes['hypervisor_type'] == 'QEMU'
    assert view.free(rcs.VCPU) == 29
    assert view.capacity(rcs.VCPU) == 32
    assert view.capacity('CUSTOM_GPU') == 0


def test_derived_column_follows_re_reports():
    table = filter_hosts.table(dict(host='h1', running_vms=1),
                               dict(host='h2'))
    column = table.column('double_vms', -1.0,
                          derive=lambda a: 2 * a.get('running_vms', 0))
    assert list(column) == [2.0, 0.0]
    table.apply([filter_hosts.provider(1, host='h1', running_vms=3),
                 filter_hosts.provider(3, host='h3', running_vms=5)])
    assert list(table.column('double_vms')) == [6.0, 0.0, 10.0]


def test_a_derivation_that_fails_on_a_host_gives_it_the_default(caplog):
    """A plugin's column derivation that raises on one host's attributes:
    that host reads the default, and the table keeps taking reports
    (the poller applies every host's through it)."""
    table = filter_hosts.table(dict(host='h1', running_vms=1),
                               dict(host='h2', running_vms=2))
    column = table.column('per_vm', -1.0,
                          derive=lambda a: 10 / (a['running_vms'] - 1))
    assert list(column) == [-1.0, 10.0]
    table.apply([filter_hosts.provider(1, host='h1', running_vms=3),
                 filter_hosts.provider(3, host='h3', running_vms=1)])
    assert list(table.column('per_vm')) == [5.0, 10.0, -1.0]
    failures = [r for r in caplog.records if 'per_vm' in r.getMessage()]
    assert len(failures) == 1


def test_expected_columns_are_built_in_one_pass():
    table = filter_hosts.table(dict(host='h1', running_vms=1),
                               dict(host='h2', running_vms=2))
    decoded = []
    each = table.attributes.each_decoded

    def counting():
        for row, attributes in each():
            decoded.append(row)
            yield row, attributes

    table.attributes.each_decoded = counting
    table.expect_columns([('running_vms', 0.0, None),
                          ('twice', -1.0, lambda a: 2 * a['running_vms'])])
    assert list(table.column('vcpus')) == [8.0, 8.0]
    assert decoded == [0, 1]  # one pass built all three
    assert list(table.column('twice')) == [2.0, 4.0]
    assert list(table.column('running_vms')) == [1.0, 2.0]
    assert decoded == [0, 1]


# (id, host and node names of the rows, node asked for, its rows)
NODES = [
    ('node named like its host', [('h1', 'h1'), ('h2', 'h2')], 'h2', [1]),
    ('several nodes of a host', [('h1', 'n1'), ('h1', 'n2'), ('h2', 'h2')],
     'n2', [1]),
    ('a node named like another host', [('h1', 'h2'), ('h2', 'h2')], 'h2',
     [1, 0]),
    ('a host is not a node', [('h1', 'n1')], 'h1', []),
    ('unknown', [('h1', 'h1')], 'nope', []),
]


@pytest.mark.parametrize('names, node, rows', [n[1:] for n in NODES],
                         ids=[n[0] for n in NODES])
def test_rows_of_node(names, node, rows):
    providers = [fakes.provider(i, host, node=nodename)
                 for i, (host, nodename) in enumerate(names, 1)]
    applied = fakes.host_table(*providers)
    assert applied.rows_of_node(node) == rows


def test_per_host_reads_a_mapping_of_hosts():
    table = filter_hosts.table(dict(host='h1'), dict(host='h2'),
                               dict(host='h3'))
    values = table.per_host({'h3': 2, 'h1': 5, 'gone': 9}, [2, 0, 1, 2])
    assert values.tolist() == [2.0, 5.0, 0.0, 2.0]
    assert table.per_host({}, [1], default=-1).tolist() == [-1.0]


def test_every_row_is_the_index_of_every_row_never_a_stale_one():
    table = fakes.host_table(fakes.provider(1, 'h1'), fakes.provider(2, 'h2'))
    rows = table.every_row()
    assert rows.tolist() == [0, 1]
    # the same object while the table keeps its rows (the driver and the
    # plugins recognise it by identity), and nobody may write into it
    table.apply([fakes.provider(1, 'h1', vcpus_used=3)])
    assert table.every_row() is rows
    with pytest.raises(ValueError):
        rows[0] = 1
    # a provider appended: a new index with the new row, at once
    table.apply([fakes.provider(3, 'h3')])
    assert table.every_row() is not rows
    assert table.every_row().tolist() == [0, 1, 2]
    assert rows.tolist() == [0, 1]  # what a caller holds does not move
