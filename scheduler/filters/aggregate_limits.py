"""AggregateIoOpsFilter and AggregateNumInstancesFilter.

Like IoOpsFilter / NumInstancesFilter, with the limit taken from the
metadata ``max_io_ops_per_host`` / ``max_instances_per_host`` of the
host's aggregates (the smallest if several set it), falling back to the
``[filter_scheduler]`` option of the same name. Vectorized.
"""

import numpy as np

from scheduler.filters import base


def _limits(table, key, default):
    limits = np.full(table.size, float(default))
    for agg in table.aggregates.with_metadata(key):
        try:
            value = float(agg['metadata'][key])
        except ValueError:
            continue  # a typo in metadata must not break scheduling
        for host in agg['hosts']:
            rows = table.rows_of_host(host)
            limits[rows] = np.minimum(limits[rows], value)
    return limits


class AggregateIoOpsFilter(base.BaseFilter):

    def filter_all(self, table, request):
        limits = _limits(table, 'max_io_ops_per_host',
                         self.conf.filter_scheduler.max_io_ops_per_host)
        return table.column('current_workload') < limits


class AggregateNumInstancesFilter(base.BaseFilter):

    def filter_all(self, table, request):
        limits = _limits(table, 'max_instances_per_host',
                         self.conf.filter_scheduler.max_instances_per_host)
        return table.column('running_vms') < limits
