"""A worker's cold load and its poller's updates, column by column.

``load(table, providers, inventories)`` fills an empty ``HostTable`` from
the rows of ``scheduler.db.provider_reads.load_all`` (plain tuples, no dict
per row): each column is built once with ``np.fromiter`` / fancy indexing
instead of one numpy store per row and field, and attributes stay JSON
text (``AttributeStore``). The result is the table ``HostTable.apply``
would build from the same rows (``tests/unit/host_state/test_bulk.py``).
No Python loop runs per inventory row, and per provider only the ones
that build the host-name index.

``apply_changes(table, providers, inventories, read_epoch)`` applies the
rows of ``scheduler.db.provider_reads.read_changed`` (the same columns; report
times as datetimes or ISO text) to a table that has rows, as
``HostTable.apply`` would apply them as dicts (same test). A batch whose
rows only changed usage (claims, releases: nearly every poll of a busy
cloud) takes a fast path: the table's report time of each row is the
read's, so no report was written since, and what changes without one
(allocation ratios, reported usage) is the table's too; then only the
generation, failed builds, claimed and free amounts are stored, a few
numpy calls per resource class for the whole batch (``_apply_usage``).
Any other batch is applied whole: the numbers of every row (generation,
state, report time, failed builds, inventories) as one fancy-indexed
store per column, and row by row only what a report changed beyond
numbers (attributes text, zone, kind: ``HostTable.describe_row``) and
providers new to the table, then the report columns of the rows. No
Python step runs per row that only changed usage, on either path.

``collector_paused()`` wraps a cold load: the collector does not run
while the hundreds of thousands of small objects of the rows are made
(it would scan them dozens of times for nothing), and what survives the
load is frozen out of later collections (``gc.freeze``), so a full
collection during a decision does not walk the whole table.
"""

import contextlib
import datetime
import gc
import itertools
import operator

import numpy as np

from scheduler.host_state.table import ResourceColumns

# the column order of scheduler.db.provider_reads.load_all
PROVIDER_FIELDS = ('id', 'uuid', 'host', 'nodename', 'generation',
                   'disabled', 'availability_zone', 'reported_at',
                   'attributes', 'failed_builds', 'kind')
INVENTORY_FIELDS = ('provider_id', 'resource_class', 'total', 'reserved',
                    'capacity', 'reported_used', 'claimed', 'min_unit',
                    'max_unit', 'step_size', 'allocation_ratio')


# the integer fields of an inventory row (all but the first two and the
# allocation ratio)
_NUMBER_FIELDS = INVENTORY_FIELDS[2:-1]


@contextlib.contextmanager
def collector_paused():
    """No garbage collection inside; what is alive after it is frozen."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()


def load(table, providers, inventories):
    """Fill the empty ``table``; returns the number of providers."""
    assert table.size == 0, 'bulk load into a table that has rows'
    n = len(providers)
    if not n:
        return 0
    table.grow(max(n, table.allocated))
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
    table.row_index.update(zip(ids, range(n)))
    rows_of_host = table.host_rows
    for row, host in enumerate(hosts):
        rows_of_host.setdefault(host, []).append(row)
    for row in [r for r, (host, node) in enumerate(zip(hosts, nodenames))
                if host != node]:
        table.other_nodes.setdefault(nodenames[row], []).append(row)
    table.attributes.extend(attributes)
    _zones(table, zones, n)
    _labels(table, kinds, hosts, attributes, n)
    _inventories(table, inventories)
    # none should exist on an empty table; were one asked for, it would
    # hold no row of these
    table.forget_columns()
    return n


def _labels(table, kinds, hosts, attributes, n):
    """Kinds and host names as whole columns; traits and locality row by
    row, only where the JSON text has some (``HostTable.set_labels``)."""
    table.labels.set_bulk(kinds, hosts, n)
    labelled = [row for row, raw in enumerate(attributes)
                if raw and ('"traits": ["' in raw or '"locality": {"' in raw)]
    for row in labelled:
        table.set_labels(row, {'kind': kinds[row],
                                'attributes': attributes[row]})


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


def _inventories(table, inventories, accepted=None):
    """Every inventory field as one numpy column, scattered to the rows
    of its provider, class by class; with ``accepted`` (an index array of
    rows) only to those rows, which lose the classes they no longer have
    (an inventory withdrawn: zeroed). Free amounts follow."""
    m = len(inventories)
    fields = list(zip(*inventories)) or [()] * len(INVENTORY_FIELDS)
    if accepted is None:
        rows, known = _rows_of_ids(table,
                                   np.fromiter(fields[0], np.int64, m))
        touched = slice(0, table.size)
    else:
        rows = _rows_of(table, fields[0])
        known = _mask(table, accepted)[rows] & (rows >= 0)
        touched = accepted
    # an inventory whose provider the first query did not see yet (both
    # read without one snapshot) comes with the provider's next change
    codes, classes = _class_codes(fields[1], m)
    # the integer fields as one (field, row) block, the ratio apart
    numbers = np.array(fields[2:-1], dtype=np.int64).reshape(-1, m)
    ratios = np.fromiter(fields[-1], np.float64, m)
    step = _NUMBER_FIELDS.index('step_size')
    for rc in classes:
        if rc not in table.resources:
            table.resources[rc] = ResourceColumns(table.allocated)
    for rc, cols in table.resources.items():
        of_class = known & (codes == classes.index(rc)) if rc in classes \
            else np.zeros(m, dtype=bool)
        where = rows[of_class]
        if accepted is not None:
            _withdraw(cols, accepted[~_mask(table, where)[accepted]])
        block = numbers[:, of_class]
        for index, name in enumerate(_NUMBER_FIELDS):
            getattr(cols, name)[where] = block[index]
        cols.allocation_ratio[where] = ratios[of_class]
        cols.stepped = cols.stepped or bool(np.any(block[step] > 1))
        cols.free[touched] = cols.capacity[touched] - np.maximum(
            cols.reported_used[touched],
            cols.claimed[touched] + cols.assumed[touched])


def _mask(table, rows):
    """A mask of the table's rows (one more, False, for row -1)."""
    mask = np.zeros(table.size + 1, dtype=bool)
    mask[rows] = True
    return mask


def _withdraw(cols, rows):
    """The class is gone from these rows' inventories."""
    if len(rows):
        for name in ResourceColumns.NAMES + ('allocation_ratio',):
            getattr(cols, name)[rows] = 0


def apply_changes(table, providers, inventories, read_epoch=None):
    """Apply changed providers and their inventories (module docstring);
    returns the number of providers. ``read_epoch``: as for
    ``HostTable.apply`` (a row confirmed since is left for a re-read)."""
    n = len(providers)
    if not n:
        return 0
    columns = list(zip(*providers))
    rows = _rows_of(table, columns[0])
    stamps = _timestamps(columns[7])
    epoch = read_epoch if read_epoch is not None else table.confirm_epoch
    if (rows.min() >= 0 and (table.reported_at[rows] == stamps).all()
            and _apply_usage(table, columns, rows, inventories, epoch)):
        return n
    new = np.flatnonzero(rows < 0)
    renamed = [index for index in _renamed(table, rows, columns).tolist()
               if table.rename_row(int(rows[index]), columns[2][index],
                                   columns[3][index])]
    for index in new.tolist():
        rows[index] = table.append_provider(dict(zip(PROVIDER_FIELDS,
                                             providers[index])))
    keep = table.confirmed[rows] <= epoch
    if not keep.all():
        table.dirty.update(np.asarray(columns[0])[~keep].tolist())
    where = rows[keep]
    table.provider_id[where] = np.asarray(columns[0], np.int64)[keep]
    table.generation[where] = np.asarray(columns[4], np.int64)[keep]
    table.disabled[where] = np.asarray(columns[5], dtype=bool)[keep]
    table.reported_at[where] = stamps[keep]
    table.failed_builds[where] = _failed_builds(columns[9])[keep]
    described = _described(table, rows, columns)
    described[new] = True
    described[renamed] = True
    for index in np.flatnonzero(described & keep).tolist():
        table.describe_row(int(rows[index]),
                        dict(zip(PROVIDER_FIELDS, providers[index])))
    _inventories(table, inventories, where)
    for column, compute in table.report_columns.values():
        column[where] = compute(table, where)
    return n


def _apply_usage(table, columns, rows, inventories, epoch):
    """The fast path: apply rows of providers the table has, whose report
    time is the table's, if their inventories changed nothing but their
    usage; returns False, having changed nothing, if one changed more.

    A report time that did not move means no report was written since
    the table's (each one moves it forward: ``scheduler.db.providers``),
    so the row's description, state and reported numbers are the
    table's. What changes without a report is compared (the allocation
    ratio, an aggregate's, and with it the capacity; the reported usage,
    which free amounts rest on, should a writer of another release move
    it alone) or stored
    (failed builds). So only the generation, failed builds, claimed and
    free amounts are stored, with a few numpy calls per resource class
    for the whole batch: no description compared, no report column
    recomputed.
    """
    by_class = _usage_by_class(table, inventories)
    if by_class is None:
        return False
    for cols, where, (_, used, _), ratios in by_class:
        if ((cols.reported_used[where] != used)
                | (cols.allocation_ratio[where] != ratios)).any():
            return False
    keep = table.confirmed[rows] <= epoch
    everything = keep.all()
    if not everything:
        table.dirty.update(np.asarray(columns[0])[~keep].tolist())
        rows = rows[keep]
    table.generation[rows] = np.asarray(columns[4], np.int64)[keep]
    table.failed_builds[rows] = _failed_builds(columns[9])[keep]
    for cols, where, block, _ in by_class:
        if not everything:
            kept = table.confirmed[where] <= epoch
            where, block = where[kept], block[:, kept]
        capacity, used, claimed = block
        cols.claimed[where] = claimed
        cols.free[where] = capacity - np.maximum(
            used, claimed + cols.assumed[where])
    return True


def _usage_by_class(table, inventories):
    """The inventory rows grouped by resource class, without a Python
    step per row: ``[(the class's columns, table rows, capacity, reported
    usage and claimed as a (3, rows) block, allocation ratios)]``; None
    if a row's provider or class is not in the table."""
    m = len(inventories)
    if not m:
        return []
    fields = list(zip(*inventories))
    rows = _rows_of(table, fields[0])
    classes = sorted(set(fields[1]))
    if rows.min() < 0 or not all(rc in table.resources for rc in classes):
        return None
    code_of = {rc: code for code, rc in enumerate(classes)}
    codes = np.fromiter(map(code_of.__getitem__, fields[1]), np.intp, m)
    order = np.argsort(codes, kind='stable')
    bounds = np.searchsorted(codes[order], range(len(classes) + 1)).tolist()
    block = np.array([fields[INVENTORY_FIELDS.index(name)] for name in (
        'capacity', 'reported_used', 'claimed')], np.int64)[:, order]
    ratios = np.fromiter(fields[-1], np.float64, m)[order]
    rows = rows[order]
    return [(table.resources[rc], rows[start:end], block[:, start:end],
             ratios[start:end])
            for rc, start, end in zip(classes, bounds, bounds[1:])]


def _failed_builds(values):
    return np.asarray([f or 0 for f in values] if None in values
                      else values, np.int64)


def _rows_of(table, provider_ids):
    """Row of each provider id, -1 for ids the table has not (a dict
    lookup per id, run by ``map`` in C)."""
    return np.fromiter(map(table.row_index.get, provider_ids,
                           itertools.repeat(-1)), np.intp,
                       len(provider_ids))


def _timestamps(values):
    """Naive UTC datetimes (or None: 0.0) as POSIX seconds."""
    stamps = np.array(values, dtype='datetime64[us]')
    seconds = stamps.astype(np.int64) / 1e6
    seconds[np.isnat(stamps)] = 0.0
    return seconds


def _described(table, rows, columns):
    """Mask of the rows whose attributes text, reported zone or kind
    differ from the table's: those are described again row by row.
    (Element-wise comparisons run by ``map`` in C, no Python step per
    row; a text stored as '' reads as changed, which only costs a
    needless describe.)"""
    n = len(rows)
    at = rows.tolist()
    # the stored JSON texts, compared as text: nothing is decoded
    stored = table.attributes.texts_of(at)
    kind_ids = {kind: table.labels.kind_id(kind or 'compute')
                for kind in set(columns[10])}
    return (_differ(columns[8], stored, n)
            | _differ(columns[6], map(table.reported_zones.__getitem__, at),
                      n)
            | (np.fromiter(map(kind_ids.__getitem__, columns[10]),
                           np.int32, n) != table.labels.kind[rows]))


def _renamed(table, rows, columns):
    """Indexes of the providers the table has whose host or node name
    differs from their row's (``HostTable.rename_row``): compared by
    ``map`` in C, so a report pays no Python step per unchanged row."""
    known = rows >= 0
    if not known.any():
        return np.flatnonzero(known)
    n = len(rows)
    at = np.where(known, rows, 0).tolist()
    moved = (_differ(columns[2], map(table.hosts.__getitem__, at), n)
             | _differ(columns[3], map(table.nodenames.__getitem__, at), n))
    return np.flatnonzero(moved & known)


def _differ(left, right, n):
    return np.fromiter(map(operator.ne, left, right), bool, n)


def _rows_of_ids(table, provider_ids):
    """(row of each provider id, mask of the ids the table has)."""
    ids = table.provider_id[:table.size]
    order = np.argsort(ids, kind='stable')
    at = np.searchsorted(ids[order], provider_ids)
    at = np.minimum(at, len(ids) - 1)
    rows = order[at]
    return rows, ids[rows] == provider_ids


def _class_codes(names, m):
    """(int code per row, class name per code)."""
    codes = {}
    column = np.fromiter((codes.setdefault(name, len(codes))
                          for name in names), np.int32, m)
    return column, list(codes)
