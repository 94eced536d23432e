"""IoOpsFilter: hosts with fewer than ``max_io_ops_per_host`` busy ops.

A host passes when the ``current_workload`` its tracker last reported (the
number of builds, resizes, snapshots... in progress) is below
``[filter_scheduler] max_io_ops_per_host``. A host that reports none counts
as idle. Vectorized over the table.
"""

from scheduler.filters import base


class IoOpsFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.max_io_ops = conf.filter_scheduler.max_io_ops_per_host

    def filter_all(self, table, request):
        return table.column('current_workload') < self.max_io_ops

    def explain(self, table, request, removed_rows):
        return 'max_io_ops_per_host=%d reached' % self.max_io_ops
