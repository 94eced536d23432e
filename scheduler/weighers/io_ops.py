"""IoOpsWeigher: weigh by I/O-heavy operations in progress.

Weighs by the ``current_workload`` the tracker last reported (builds,
resizes, snapshots... in progress; none reported counts as 0), vectorized.
Multiplier: ``[filter_scheduler] io_ops_weight_multiplier``, -1.0 by
default so the least busy hosts win; positive packs onto the busiest.
"""

from scheduler.weighers import base


class IoOpsWeigher(base.BaseWeigher):
    multiplier_option = 'io_ops_weight_multiplier'

    def weigh_all(self, table, rows, request):
        return table.column('current_workload')[rows]
