"""HostTable: columnar provider state; HostView: one row of it.

Rows are appended as providers appear and updated in place afterwards; a
provider's row index never changes, so masks and index arrays computed by
filters stay valid for the whole request. Usage of a resource class is
``max(reported_used, claimed + assumed)``; ``free(rc)`` is capacity minus
that. ``claimed`` is the database's figure (plus this worker's confirmed
claims until the next read of the row brings them in); ``assumed`` holds
this worker's tentative claims (``scheduler.host_state.assumed``), which a
reload of the row never erases: only ``forget`` or ``confirm`` do.

The poller writes whole columns at once (``scheduler.host_state.bulk``)
through the table's update API, which is public for it: ``grow`` and
``allocated`` (the columns' length), ``row_index`` (provider id -> row),
``host_rows`` and ``other_nodes`` (the indexes of hosts and nodes),
``append_provider``, ``describe_row`` and ``set_labels`` (one row's
identity and labels), ``report_columns`` (columns derived from a report).
Anything else changes rows through ``apply``.
"""

import datetime

import numpy as np
from oslo_log import log as logging

from scheduler.model import fit
from scheduler.model import host_metrics
from scheduler.model import pci
from scheduler.model import resource_classes as rcs
from scheduler.host_state.aggregates import AggregateIndex
from scheduler.host_state.attributes import AttributeStore
from scheduler.host_state.image_properties import ImagePropertyIndex
from scheduler.host_state.labels import HOST_SCOPE
from scheduler.host_state.labels import ProviderLabels

LOG = logging.getLogger(__name__)

_INITIAL_CAPACITY = 64


class ResourceColumns:
    """The per-row numbers of one resource class.

    ``free`` (capacity - max(reported_used, claimed + assumed)) is kept up
    to date by ``set_row`` and the claim methods of ``HostTable`` rather
    than recomputed by every filter and weigher of every request.
    """

    NAMES = ('total', 'reserved', 'capacity', 'reported_used', 'claimed',
             'min_unit', 'max_unit', 'step_size')

    def __init__(self, size):
        for name in self.NAMES:
            setattr(self, name, np.zeros(size, dtype=np.int64))
        self.allocation_ratio = np.zeros(size, dtype=np.float64)
        self.free = np.zeros(size, dtype=np.int64)
        self.assumed = np.zeros(size, dtype=np.int64)
        # does any row have a step_size above 1 (scheduler.model.fit)?
        self.stepped = False

    def update_free(self, row):
        self.free[row] = self.capacity[row] - max(
            self.reported_used[row], self.claimed[row] + self.assumed[row])

    def grow(self, size):
        for name in self.NAMES + ('allocation_ratio', 'free', 'assumed'):
            old = getattr(self, name)
            new = np.zeros(size, dtype=old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)

    def set_row(self, row, inventory):
        if inventory is None:
            for name in self.NAMES:
                getattr(self, name)[row] = 0
            self.allocation_ratio[row] = 0.0
        else:
            for name in self.NAMES:
                getattr(self, name)[row] = inventory[name]
            self.allocation_ratio[row] = inventory['allocation_ratio']
            self.stepped = self.stepped or inventory['step_size'] > 1
        self.update_free(row)


class HostTable:
    """All providers of the cloud, one row each, one array per column.

    A host's availability zone is the one its aggregates give it, else the
    one its tracker reports, else ``default_zone``.
    """

    def __init__(self, default_zone=None, image_properties=()):
        self.default_zone = default_zone
        self.aggregates = AggregateIndex()
        self.image_properties = ImagePropertyIndex(image_properties)
        self.size = 0
        self.allocated = _INITIAL_CAPACITY
        self.provider_id = np.zeros(self.allocated, dtype=np.int64)
        self.generation = np.zeros(self.allocated, dtype=np.int64)
        self.disabled = np.zeros(self.allocated, dtype=bool)
        self.reported_at = np.zeros(self.allocated, dtype=np.float64)
        self.az = np.zeros(self.allocated, dtype=np.int32)
        self.failed_builds = np.zeros(self.allocated, dtype=np.int64)
        # when this worker last confirmed a claim on the row (see apply)
        self.confirmed = np.zeros(self.allocated, dtype=np.int64)
        self.confirm_epoch = 0
        self.dirty = set()
        self.resources = {rc: ResourceColumns(self.allocated)
                          for rc in rcs.STANDARD}
        # kind, traits and locality columns (generic providers)
        self.labels = ProviderLabels(self.allocated)
        self.hosts = []
        self.reported_zones = []
        self.nodenames = []
        self.uuids = []
        self.attributes = AttributeStore()
        self.az_names = []
        self._az_index = {}
        self.row_index = {}
        self.host_rows = {}
        # rows whose node is not named like their host (most are: those
        # are found through host_rows), see rows_of_node()
        self.other_nodes = {}
        # attribute name -> (numpy column, default, value_of), see column()
        self._attribute_columns = {}
        # name -> (numpy column, compute), see report_column()
        self.report_columns = {}
        # name -> (default, derive) of columns built together, see column()
        self._expected = {}
        # see every_row(): rebuilt when its length is not the size
        self._every_row = np.arange(0, dtype=np.intp)
        self._every_row.flags.writeable = False

    # -- loading --------------------------------------------------------

    def apply(self, providers, read_epoch=None):
        """Insert or update rows from ``scheduler.db.provider_reads`` dicts.

        ``read_epoch``: ``confirm_epoch`` when they were read. A row this
        worker confirmed a claim on since then may have been read without
        it: it is left as it is and listed in ``dirty``, to be re-read.
        """
        changed = []
        # per row, for callers outside the poller (which uses
        # scheduler.host_state.bulk.apply_changes, whole columns at once)
        for provider in providers:
            row = self.row_index.get(provider['id'])
            if row is None:
                row = self.append_provider(provider)
            elif (read_epoch is not None
                  and self.confirmed[row] > read_epoch):
                self.dirty.add(provider['id'])
                continue
            self._set_row(row, provider)
            changed.append(row)
        if changed and self.report_columns:
            rows = np.array(changed, dtype=np.intp)
            for column, compute in self.report_columns.values():
                column[rows] = compute(self, rows)

    def rename_row(self, row, host, nodename):
        """The provider of ``row`` now reports as ``(host, nodename)``
        (``scheduler.db.providers``: a provider renamed keeps its row):
        the host and node indexes follow; its zone and host locality
        follow at ``describe_row``. Returns whether the name changed."""
        old_host, old_node = self.hosts[row], self.nodenames[row]
        if (old_host, old_node) == (host, nodename):
            return False
        _drop(self.host_rows, old_host, row)
        if old_node != old_host:
            _drop(self.other_nodes, old_node, row)
        self.host_rows.setdefault(host, []).append(row)
        if nodename != host:
            self.other_nodes.setdefault(nodename, []).append(row)
        self.hosts[row], self.nodenames[row] = host, nodename
        return True

    def take_dirty(self):
        """The provider ids to re-read (and forget them)."""
        dirty, self.dirty = self.dirty, set()
        return dirty

    def append_provider(self, provider):
        if self.size == self.allocated:
            self.grow(self.allocated * 2)
        row = self.size
        self.size += 1
        self.row_index[provider['id']] = row
        self.host_rows.setdefault(provider['host'], []).append(row)
        if provider['nodename'] != provider['host']:
            self.other_nodes.setdefault(provider['nodename'], []).append(row)
        self.hosts.append(provider['host'])
        self.reported_zones.append(None)
        self.nodenames.append(provider['nodename'])
        self.uuids.append(provider['uuid'])
        self.attributes.append()
        self.labels.append()
        return row

    def grow(self, size):
        for name in ('provider_id', 'generation', 'disabled',
                     'reported_at', 'az', 'failed_builds', 'confirmed'):
            old = getattr(self, name)
            new = np.zeros(size, dtype=old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)
        for columns in self.resources.values():
            columns.grow(size)
        self.labels.grow(size)
        for name, (column, default, value_of) in \
                self._attribute_columns.items():
            new = np.full(size, default, dtype=column.dtype)
            new[:len(column)] = column
            self._attribute_columns[name] = (new, default, value_of)
        for name, (column, compute) in self.report_columns.items():
            new = np.zeros(size, dtype=column.dtype)
            new[:len(column)] = column
            self.report_columns[name] = (new, compute)
        self.allocated = size

    def _set_row(self, row, provider):
        self.provider_id[row] = provider['id']
        self.generation[row] = provider['generation']
        self.disabled[row] = bool(provider['disabled'])
        reported = provider.get('reported_at')
        # the database stores naive UTC datetimes
        self.reported_at[row] = (
            reported.replace(tzinfo=datetime.timezone.utc).timestamp()
            if reported is not None else 0.0)
        self.failed_builds[row] = provider.get('failed_builds') or 0
        self.describe_row(row, provider)
        inventories = provider.get('inventories', {})
        for rc in inventories:
            if rc not in self.resources:
                self.resources[rc] = ResourceColumns(self.allocated)
        for rc, columns in self.resources.items():
            columns.set_row(row, inventories.get(rc))

    def describe_row(self, row, provider):
        """What is not a number of the row's report: its zone, attributes
        (and the attribute columns), kind, traits and locality."""
        self.reported_zones[row] = provider.get('availability_zone')
        self._set_zone(row)
        self.attributes.set(row, provider.get('attributes'))
        self.set_labels(row, provider)
        if self._attribute_columns:
            attributes = self.attributes.peek(row)
            for column, default, value_of in \
                    self._attribute_columns.values():
                column[row] = _number(value_of(attributes), default)

    def set_labels(self, row, provider):
        """Kind, traits and locality of the row (``labels``); the JSON
        text is only decoded when it holds non-empty traits or locality
        (most compute nodes have neither)."""
        raw = provider.get('attributes')
        attributes = {}
        if isinstance(raw, dict) or (raw and (
                '"traits": ["' in raw or '"locality": {"' in raw)):
            attributes = self.attributes.peek(row)
        locality = dict(attributes.get('locality') or {})
        locality[HOST_SCOPE] = self.hosts[row]
        self.labels.set_row(row, provider.get('kind'),
                            attributes.get('traits'), locality)

    def apply_aggregates(self, changes):
        """Apply aggregate changes and re-derive the zones they affect."""
        for host in self.aggregates.apply(changes):
            for row in self.rows_of_host(host):
                self._set_zone(row)

    def _set_zone(self, row):
        zone = (self.aggregates.zone_of(self.hosts[row])
                or self.reported_zones[row] or self.default_zone)
        self.az[row] = self.az_id(zone)

    def az_id(self, name):
        """Index of availability zone ``name`` (None is index 0's peer)."""
        index = self._az_index.get(name)
        if index is None:
            index = len(self.az_names)
            self.az_names.append(name)
            self._az_index[name] = index
        return index

    def az_lookup(self, name):
        """Index of ``name`` if some host is in it, else -1."""
        return self._az_index.get(name, -1)

    # -- reading --------------------------------------------------------

    def row_of(self, provider_id):
        return self.row_index.get(provider_id)

    def rows_of_host(self, host):
        return self.host_rows.get(host, [])

    def rows_of_node(self, nodename):
        return [row for row in self.rows_of_host(nodename)
                if self.nodenames[row] == nodename] + \
            self.other_nodes.get(nodename, [])

    def per_host(self, numbers, rows, default=0.0):
        """``numbers[host of row]`` for each of ``rows`` (``default`` for
        hosts not in the mapping), as floats: a loop over the mapping's
        hosts, none over the rows."""
        by_row = np.full(self.size, default, dtype=np.float64)
        for host, number in numbers.items():
            by_row[self.rows_of_host(host)] = number
        return by_row[np.asarray(rows, dtype=np.intp)]

    def every_row(self):
        """The index of every row (``arange(size)``), read-only, and the
        same object as long as the table has ``size`` rows. The driver
        passes it as the candidates when no filter removed a host; a
        plugin that finds ``rows is table.every_row()`` may read whole
        columns (``column[:size]``: views) instead of gathering ``rows``
        (``scheduler.host_state.host_values``), for the same numbers."""
        rows = self._every_row
        if len(rows) != self.size:  # rows were appended since
            rows = np.arange(self.size, dtype=np.intp)
            rows.flags.writeable = False
            self._every_row = rows
        return rows

    def free(self, rc, rows=None):
        """Capacity left for ``rc``, per row (all rows, or ``rows``)."""
        columns = self.resources.get(rc)
        if columns is None:
            n = self.size if rows is None else len(rows)
            return np.zeros(n, dtype=np.int64)
        return columns.free[:self.size] if rows is None else \
            columns.free[rows]

    def fits(self, row, resources):
        """True if ``resources`` fit on ``row`` right now (the rule of
        ``scheduler.model.fit``)."""
        return bool(fit.fits_all(self, resources, [row])[0])

    def add_claim(self, row, resources):
        """Count ``resources`` as claimed on ``row`` in the database."""
        self._add(row, resources, 'claimed', 1)

    def assume(self, row, resources):
        """Count a tentative claim of this worker on ``row``."""
        self._add(row, resources, 'assumed', 1)

    def forget(self, row, resources):
        """Drop a tentative claim (it was never written)."""
        self._add(row, resources, 'assumed', -1)

    def confirm(self, row, resources):
        """A tentative claim was committed: count it as claimed until the
        row is next read (which then includes it)."""
        self.confirm_epoch += 1
        self.confirmed[row] = self.confirm_epoch
        for rc, amount in resources.items():
            columns = self.resources[rc]
            columns.assumed[row] -= amount
            columns.claimed[row] += amount
        # claimed + assumed, and with it the free amount, did not move

    def _add(self, row, resources, column, sign):
        for rc, amount in resources.items():
            columns = self.resources[rc]
            getattr(columns, column)[row] += sign * amount
            columns.update_free(row)

    def view(self, row):
        return HostView(self, row)

    def column(self, name, default=0.0, derive=None):
        """Numeric tracker attribute ``name`` (e.g. ``running_vms``,
        ``current_workload``, ``hypervisor_version``; ``stats.<key>`` for
        a key of the tracker's stats, ``metrics.<name>`` for the value of
        one of its metrics, ``pci_free_devices`` for the devices of its
        PCI pools) as a float column of
        length ``size``. Built from the rows once, then kept up to date in
        place by ``apply``; values that are missing or not numbers read as
        ``default``.

        ``derive(attributes)``, if given, computes the value of a column a
        plugin names itself (e.g. a host's number of NUMA cells, for a
        vectorized pre-check before its per-host one); the first call
        with a ``name`` fixes its ``derive``.

        Building a column decodes every row's attributes: the columns
        announced with ``expect_columns`` that are not built yet are built
        in the same pass, so a pipeline's first request decodes the table
        once, not once per column.
        """
        cached = self._attribute_columns.get(name)
        if cached is None:
            wanted = {n: spec for n, spec in self._expected.items()
                      if n not in self._attribute_columns}
            wanted[name] = (default, derive)
            self._build_columns(wanted)
            cached = self._attribute_columns[name]
        return cached[0][:self.size]

    def expect_columns(self, specs):
        """Announce ``(name, default, derive)`` columns a pipeline will
        read (``column``); the first one asked for builds them all."""
        for name, default, derive in specs:
            self._expected.setdefault(name, (default, derive))

    def build_expected_columns(self):
        """Build the announced columns not built yet (``expect_columns``),
        in one decoding pass, as their first use would."""
        missing = {name: spec for name, spec in self._expected.items()
                   if name not in self._attribute_columns}
        if missing:
            self._build_columns(missing)

    def _build_columns(self, specs):
        """Build ``{name: (default, derive)}`` in one decoding pass."""
        built = []
        for name, (default, derive) in specs.items():
            column = np.full(self.allocated, default, dtype=np.float64)
            built.append((column, default, _value_of(name, derive)))
            self._attribute_columns[name] = built[-1]
        for row, attributes in self.attributes.each_decoded():
            for column, default, value_of in built:
                column[row] = _number(value_of(attributes), default)


    def report_column(self, name, compute):
        """Float column ``name`` of what ``compute(table, rows)`` derives
        from the rows' reports (their inventories and attribute columns,
        never claims, which change between reports): computed for every
        row on first use, then again for the rows ``apply`` changes, so
        a request reads it instead of deriving it (e.g. nova's free RAM
        less the table's free amount, ``scheduler.host_state.host_values``).
        The first call with a ``name`` fixes its ``compute``.
        """
        cached = self.report_columns.get(name)
        if cached is None:
            column = np.zeros(self.allocated, dtype=np.float64)
            column[:self.size] = compute(self, np.arange(self.size))
            cached = self.report_columns[name] = (column, compute)
        return cached[0][:self.size]

    def forget_columns(self):
        """Drop the attribute and report columns (rebuilt on next use):
        after rows were set other than by ``apply``."""
        self._attribute_columns.clear()
        self.report_columns.clear()


# columns derived from a host's attributes when it reports, so plugins
# read numbers instead of parsing its attributes per request
_DERIVED = {
    'metrics': lambda attributes, name: (
        host_metrics.host_metrics(attributes).get(name) if name else None),
    'pci_free_devices': lambda attributes, _: sum(
        count for _, count in pci.host_pools(attributes)),
}


def _value_of(name, derive):
    """``attributes -> value`` of column ``name``. A plugin's ``derive``
    that fails on a host's attributes gives that host the column's
    default (logged once per column): it must not stop the table's
    updates, which every host's reports go through."""
    if derive is None:
        return lambda attributes: _lookup(attributes, name)
    failed = []

    def guarded(attributes):
        try:
            return derive(attributes)
        except Exception:
            if not failed:
                failed.append(name)
                LOG.exception('Column %s: deriving it from a host\'s '
                              'attributes failed; such hosts read its '
                              'default', name)
            return None
    return guarded


def _lookup(attributes, name):
    # 'stats.io_workload' names a key of the stats dict (nova's HostState
    # reads several of its values from there)
    head, _, key = name.partition('.')
    if head in _DERIVED:
        return _DERIVED[head](attributes, key)
    value = attributes.get(head)
    if key:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _number(value, default):
    if isinstance(value, bool) or value is None:
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


class HostView:
    """Read-only view of one row, for per-host filters and diagnostics."""

    __slots__ = ('_table', 'row')

    def __init__(self, table, row):
        self._table = table
        self.row = row

    @property
    def table(self):
        return self._table

    @property
    def host(self):
        return self._table.hosts[self.row]

    @property
    def nodename(self):
        return self._table.nodenames[self.row]

    @property
    def uuid(self):
        return self._table.uuids[self.row]

    @property
    def availability_zone(self):
        return self._table.az_names[self._table.az[self.row]]

    @property
    def disabled(self):
        return bool(self._table.disabled[self.row])

    @property
    def attributes(self):
        return self._table.attributes[self.row]

    def derived(self, name, compute):
        """``compute(attributes)``, once per change of the row
        (``AttributeStore.derived``)."""
        return self._table.attributes.derived(self.row, name, compute)

    def free(self, rc):
        return int(self._table.free(rc, [self.row])[0])

    def capacity(self, rc):
        columns = self._table.resources.get(rc)
        return int(columns.capacity[self.row]) if columns is not None else 0

    def allocation_ratio(self, rc):
        """The inventory's allocation ratio of ``rc`` (0.0 if none)."""
        columns = self._table.resources.get(rc)
        return (float(columns.allocation_ratio[self.row])
                if columns is not None else 0.0)


def _drop(index, name, row):
    """Remove ``row`` from ``index[name]`` (and the name once empty)."""
    rows = index.get(name)
    if rows is not None and row in rows:
        rows.remove(row)
        if not rows:
            del index[name]
