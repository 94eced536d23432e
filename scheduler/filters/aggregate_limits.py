"""AggregateIoOpsFilter and AggregateNumInstancesFilter.

Like IoOpsFilter / NumInstancesFilter (nova's ``num_io_ops`` and
``num_instances``, see ``host_values``), with the limit taken from the
metadata ``max_io_ops_per_host`` / ``max_instances_per_host`` of the
host's aggregates (the smallest if several set it), falling back to the
``[filter_scheduler]`` option of the same name. Vectorized.
"""

import math

import numpy as np

from scheduler.filters import base
from scheduler.filters import host_values


def _limits(table, key, default):
    # host -> smallest valid value its aggregates set; it replaces the
    # default (it may be higher), it is not merely capped by it
    smallest = {}
    for agg in table.aggregates.with_metadata(key):
        try:
            value = float(agg['metadata'][key])
        except ValueError:
            continue  # a typo in metadata must not break scheduling
        if math.isnan(value):
            continue
        for host in agg['hosts']:
            smallest[host] = min(value, smallest.get(host, value))
    limits = np.full(table.size, float(default))
    for host, value in smallest.items():
        limits[table.rows_of_host(host)] = value
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
