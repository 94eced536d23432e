"""IoOpsFilter: hosts with fewer than ``max_io_ops_per_host`` busy ops.

A host passes when nova's ``num_io_ops``, the ``io_workload`` in its
tracker's stats (instances building, resizing, snapshotting, backing up,
migrating or rescuing), is below ``[filter_scheduler]
max_io_ops_per_host``. A host that reports none counts as idle (see
``host_values`` for trackers that are not nova's). Vectorized.
"""

from scheduler.filters import base
from scheduler.host_state import host_values


class IoOpsFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.max_io_ops = conf.filter_scheduler.max_io_ops_per_host

    def filter_all(self, table, request):
        return host_values.num_io_ops(table) < self.max_io_ops

    def explain(self, table, request, removed_rows):
        return 'max_io_ops_per_host=%d reached' % self.max_io_ops
