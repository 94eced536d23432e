"""A worker's cold load, column by column.

``load(table, providers, inventories)`` fills an empty ``HostTable`` from
the rows of ``scheduler.db.providers.load_all`` (plain tuples, no dict per
row): each column is built once with ``np.fromiter`` / fancy indexing
instead of one numpy store per row and field, and attributes stay JSON
text (``AttributeStore``). The result is the table ``HostTable.apply``
would build from the same rows (``tests/unit/host_state/test_bulk.py``).
"""

import datetime

import numpy as np

from scheduler.host_state.table import _ResourceColumns

# the column order of scheduler.db.providers.load_all
PROVIDER_FIELDS = ('id', 'uuid', 'host', 'nodename', 'generation',
                   'disabled', 'availability_zone', 'reported_at',
                   'attributes', 'failed_builds', 'kind')
INVENTORY_FIELDS = ('provider_id', 'resource_class', 'total', 'reserved',
                    'capacity', 'reported_used', 'claimed', 'min_unit',
                    'max_unit', 'step_size', 'allocation_ratio')


def load(table, providers, inventories):
    """Fill the empty ``table``; returns the number of providers."""
    assert table.size == 0, 'bulk load into a table that has rows'
    n = len(providers)
    if not n:
        return 0
    table._grow(max(n, table._allocated))
    columns = list(zip(*providers))
    ids, uuids, hosts, nodenames, generations, disabled, zones, \
        reported, attributes, failed = columns[:10]
    # rows without the kind column are compute nodes
    kinds = columns[10] if len(columns) > 10 else ('compute',) * n
    table.size = n
    table.provider_id[:n] = np.fromiter(ids, np.int64, n)
    table.generation[:n] = np.fromiter(generations, np.int64, n)
    table.disabled[:n] = np.fromiter((bool(d) for d in disabled), bool, n)
    table.reported_at[:n] = np.fromiter(
        (_timestamp(r) for r in reported), np.float64, n)
    table.failed_builds[:n] = np.fromiter(
        (f or 0 for f in failed), np.int64, n)
    table.hosts[:] = hosts
    table.nodenames[:] = nodenames
    table.uuids[:] = uuids
    table.reported_zones[:] = zones
    table._row_of.update(zip(ids, range(n)))
    for row, host in enumerate(hosts):
        table._rows_of_host.setdefault(host, []).append(row)
    for row in range(n):
        table.attributes.append()
        table.attributes.set(row, attributes[row])
    _zones(table, zones, n)
    _labels(table, kinds, hosts, attributes, n)
    _inventories(table, inventories)
    return n


def _labels(table, kinds, hosts, attributes, n):
    """Kinds and host names as whole columns; traits and locality row by
    row, only where the JSON text has some (``HostTable._set_labels``)."""
    table.labels.set_bulk(kinds, hosts, n)
    for row in range(n):
        raw = attributes[row]
        if raw and ('"traits": ["' in raw or '"locality": {"' in raw):
            table._set_labels(row, {'kind': kinds[row], 'attributes': raw})


def _timestamp(value):
    # the database stores naive UTC datetimes
    if value is None:
        return 0.0
    return value.replace(tzinfo=datetime.timezone.utc).timestamp()


def _zones(table, zones, n):
    """Zones as the trackers report them (aggregates come after)."""
    ids = {}
    for zone in set(zones):
        name = zone or table.default_zone
        ids[zone] = table.az_id(name)
    table.az[:n] = np.fromiter((ids[z] for z in zones), np.int32, n)


def _inventories(table, inventories):
    by_class = {}
    for inv in inventories:
        by_class.setdefault(inv[1], []).append(inv)
    row_of = table._row_of
    for rc, rows in by_class.items():
        if rc not in table.resources:
            table.resources[rc] = _ResourceColumns(table._allocated)
        cols = table.resources[rc]
        where = np.fromiter((row_of[r[0]] for r in rows), np.int64,
                            len(rows))
        values = list(zip(*rows))
        for index, name in enumerate(INVENTORY_FIELDS[2:], start=2):
            column = cols.allocation_ratio if name == 'allocation_ratio' \
                else getattr(cols, name)
            column[where] = np.fromiter(values[index], column.dtype,
                                        len(rows))
        n = table.size
        cols.stepped = bool(np.any(cols.step_size[:n] > 1))
        cols.free[:n] = cols.capacity[:n] - np.maximum(
            cols.reported_used[:n], cols.claimed[:n] + cols.assumed[:n])
