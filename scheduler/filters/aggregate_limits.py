"""AggregateIoOpsFilter and AggregateNumInstancesFilter.

Like IoOpsFilter / NumInstancesFilter (nova's ``num_io_ops`` and
``num_instances``, see ``host_values``), with the limit taken from the
metadata ``max_io_ops_per_host`` / ``max_instances_per_host`` of the
host's aggregates (the smallest if several set it), falling back to the
``[filter_scheduler]`` option of the same name; as in nova, a host one
of whose values is not an integer gets the option. Vectorized.
"""

import collections

import numpy as np

from scheduler.filters import base
from scheduler.host_state import host_values


def _limits(table, key, default):
    # host -> its aggregates' values; as in nova, the smallest replaces the
    # default (it may be higher), and one value that is not an integer
    # makes the host fall back to the default
    values = collections.defaultdict(set)
    for agg in table.aggregates.with_metadata(key):
        for host in agg['hosts']:
            values[host].add(agg['metadata'][key])
    limits = np.full(table.size, float(default))
    for host, texts in values.items():
        try:
            limits[table.rows_of_host(host)] = min(int(t) for t in texts)
        except ValueError:
            continue  # a typo in metadata must not break scheduling
    return limits


class AggregateIoOpsFilter(base.BaseFilter):

    def filter_all(self, table, request):
        limits = _limits(table, 'max_io_ops_per_host',
                         self.conf.filter_scheduler.max_io_ops_per_host)
        return host_values.num_io_ops(table) < limits


class AggregateNumInstancesFilter(base.BaseFilter):

    def filter_all(self, table, request):
        limits = _limits(table, 'max_instances_per_host',
                         self.conf.filter_scheduler.max_instances_per_host)
        return host_values.num_instances(table) < limits
