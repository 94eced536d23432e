"""Host values as nova's HostState computes them, and nested lookups.

Nova's filters and weighers do not read the tracker's report directly: its
HostState derives a few numbers from it, and operators' configurations
(weighers, JsonFilter queries, ComputeCapabilitiesFilter extra specs) are
written against those. This module is the one place they are derived, over
numpy rows of the host table:

* ``free_ram_mb``: the tracker's ``free_ram_mb`` (physical, not scaled by
  allocation ratios; may be negative when RAM is overcommitted);
* ``free_disk_mb``: ``min(free_disk_gb, disk_available_least) * 1024``, or
  ``free_disk_gb * 1024`` when the tracker reports no
  ``disk_available_least``;
* ``vcpus_free``: ``vcpus * cpu_allocation_ratio - vcpus_used`` (what
  nova's CPUWeigher weighs);
* ``num_io_ops``, ``num_instances``: the tracker's ``stats['io_workload']``
  and ``stats['num_instances']``.

Like nova's HostState, which subtracts what its own process placed since
the last report, the free amounts subtract what claims hold beyond the
tracker's reported usage. That makes each of them a number fixed by the
host's report plus the table's free amount (``capacity - max(reported,
claims)``); the first part is a column of the table recomputed when the
host reports (``HostTable.report_column``), so a request adds two
columns instead of deriving the value from seven (whole columns, without
gathering the rows, when the rows are every row of the table:
``HostTable.every_row``).

A tracker that does not report ``free_ram_mb`` or ``free_disk_gb`` (not
nova's) gets them derived from its totals, reserved and used amounts; one
without ``stats['num_instances']`` or
``stats['io_workload']`` (not nova's either) has its ``running_vms`` and
``current_workload`` read instead.

``state_attribute(host, name)`` is the value of nova's HostState attribute
``name`` for one host (``free_ram_mb``, ``vcpus_total``, ``num_io_ops``,
``stats``, ``cpu_info``...), for the plugins that let operators name them
(JsonFilter, ComputeCapabilitiesFilter); ``descend(value, keys)`` walks
keys into dicts or JSON text (``cpu_info``).
"""

import json

import numpy as np

from scheduler.model import resource_classes as rcs

_NAN = float('nan')

#: the tracker attributes the free amounts read, as
#: ``HostTable.expect_columns`` takes them (missing: NaN)
RAM_COLUMNS = (('free_ram_mb', _NAN, None),)
DISK_COLUMNS = (('free_disk_gb', _NAN, None),
                ('disk_available_least', _NAN, None))


def usage(table, rc, rows):
    """What the table counts as used of ``rc`` (the report or the claims,
    whichever is larger): capacity minus free, so it is the table's own
    rule whatever claims it counts."""
    columns = table.resources.get(rc)
    if columns is None:
        return np.zeros(len(rows))
    return (columns.capacity[rows] - table.free(rc, rows)).astype(float)


def _unreported_claims(table, rc, rows):
    # what claims hold beyond the tracker's reported usage
    columns = table.resources.get(rc)
    if columns is None:
        return np.zeros(len(rows))
    return usage(table, rc, rows) - columns.reported_used[rows]


def _reported_or(table, name, rows, derived):
    reported = table.column(name, _NAN)[rows]
    return np.where(np.isnan(reported), derived, reported)


def _derived_free(table, rc, rows):
    columns = table.resources.get(rc)
    if columns is None:
        return np.zeros(len(rows))
    return (columns.total[rows] - columns.reserved[rows]
            - columns.reported_used[rows]).astype(float)


def _reported_free_ram(table, rows):
    derived = _derived_free(table, rcs.MEMORY_MB, rows)
    return _reported_or(table, RAM_COLUMNS[0][0], rows, derived)


def _reported_free_disk_gb(table, rows):
    derived = _derived_free(table, rcs.DISK_GB, rows)
    (free_name, _, _), (least_name, _, _) = DISK_COLUMNS
    free_gb = _reported_or(table, free_name, rows, derived)
    least = table.column(least_name, _NAN)[rows]
    return np.where(np.isnan(least), free_gb, np.minimum(free_gb, least))


def _vcpus_limit(table, rows):
    # nova ignores reserved CPUs here
    columns = table.resources[rcs.VCPU]
    return columns.total[rows] * columns.allocation_ratio[rows]


def _report_part(reported):
    """``reported(table, rows)`` less what the report leaves free in the
    table (``capacity - reported_used``): with the table's free amount
    added, the value less the claims beyond the report."""
    def compute(table, rows, rc):
        columns = table.resources[rc]
        return reported(table, rows) - (
            columns.capacity[rows] - columns.reported_used[rows])
    return compute


def _less_claims(table, rc, rows, reported, name):
    """``reported`` (table, rows) less the claims beyond the report."""
    if rc not in table.resources:
        return reported(table, rows) - _unreported_claims(table, rc, rows)
    part = table.report_column(
        name, lambda t, r: _report_part(reported)(t, r, rc))
    return _plus_free(table, part, rc, rows)


def _plus_free(table, part, rc, rows):
    """``part`` (a whole column) plus the free amount of ``rc``, at
    ``rows``: whole columns added when ``rows`` is every row (no gather,
    ``HostTable.every_row``), the same numbers either way."""
    if rows is table.every_row():
        return part + table.free(rc)
    return part[rows] + table.free(rc, rows)


def free_ram_mb(table, rows):
    return _less_claims(table, rcs.MEMORY_MB, rows, _reported_free_ram,
                        'host_values.free_ram_mb')


def free_disk_mb(table, rows):
    return _less_claims(table, rcs.DISK_GB, rows, _reported_free_disk_gb,
                        'host_values.free_disk_gb') * 1024


def vcpus_free(table, rows):
    if rcs.VCPU not in table.resources:
        return np.zeros(len(rows))
    # usage is the larger of the reported one and the claims, as
    # everywhere else: the limit less (capacity - free)
    part = table.report_column(
        'host_values.vcpus_free',
        lambda t, r: _vcpus_limit(t, r) - t.resources[rcs.VCPU].capacity[r])
    return _plus_free(table, part, rcs.VCPU, rows)


def prime(table):
    """Derive now, for every row, the columns the free amounts and the
    pipeline's plugins read (``HostTable.expect_columns``): built on
    first use otherwise, they made the first request after a worker's
    cold load decode every host's attributes (about 0.2 s at 10k hosts,
    billed to that request)."""
    if not table.size:
        return
    table.build_expected_columns()
    rows = table.every_row()
    for derive in (free_ram_mb, free_disk_mb, vcpus_free):
        derive(table, rows)


def _stat_or(table, stat, fallback, rows):
    return _reported_or(table, 'stats.' + stat, rows,
                        table.column(fallback)[rows])


def num_io_ops(table, rows=None):
    rows = slice(0, table.size) if rows is None else rows
    return _stat_or(table, 'io_workload', 'current_workload', rows)


def num_instances(table, rows=None):
    rows = slice(0, table.size) if rows is None else rows
    return _stat_or(table, 'num_instances', 'running_vms', rows)


def at(function, host):
    """``function`` (one of the above) for one HostView, as a number."""
    value = float(function(host.table, np.array([host.row]))[0])
    return int(value) if value.is_integer() else value


def _attribute(name):
    return lambda host: host.attributes.get(name)


def _used_disk_mb(host):
    used = host.attributes.get('local_gb_used')
    return None if used is None else used * 1024


#: nova's HostState attributes a flavor or a query may name, and how each
#: is read from this scheduler's host view
STATE_ATTRIBUTES = {
    'host': lambda host: host.host,
    'nodename': lambda host: host.nodename,
    'hypervisor_hostname': lambda host: host.nodename,
    'uuid': lambda host: host.uuid,
    'free_ram_mb': lambda host: at(free_ram_mb, host),
    'free_disk_mb': lambda host: at(free_disk_mb, host),
    'total_usable_ram_mb': _attribute('memory_mb'),
    'total_usable_disk_gb': _attribute('local_gb'),
    'disk_mb_used': _used_disk_mb,
    'vcpus_total': _attribute('vcpus'),
    'vcpus_used': lambda host: int(usage(host.table, rcs.VCPU,
                                         [host.row])[0])
    if rcs.VCPU in host.table.resources
    else host.attributes.get('vcpus_used'),
    'num_instances': lambda host: at(num_instances, host),
    'num_io_ops': lambda host: at(num_io_ops, host),
    'failed_builds': lambda host: int(host.table.failed_builds[host.row]),
    'stats': lambda host: host.attributes.get('stats') or {},
    **{name: _attribute(name) for name in (
        'hypervisor_type', 'hypervisor_version', 'cpu_info', 'host_ip',
        'supported_instances', 'metrics', 'numa_topology',
        'cpu_allocation_ratio', 'ram_allocation_ratio',
        'disk_allocation_ratio')},
}


def state_attribute(host, name):
    """nova's HostState ``name`` for ``host``; KeyError if it has none."""
    return STATE_ATTRIBUTES[name](host)


def descend(value, keys):
    for key in keys:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return None
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
