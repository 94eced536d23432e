"""IoOpsWeigher: weigh by I/O-heavy operations in progress.

Weighs by nova's ``num_io_ops``: the ``io_workload`` in the tracker's
stats (instances building, resizing, snapshotting, backing up, migrating
or rescuing; other task states do not count). See
``scheduler.host_state.host_values`` for trackers that do not report it.
Multiplier: ``[filter_scheduler] io_ops_weight_multiplier``, -1.0 by
default so the least busy hosts win; positive packs onto the busiest.
"""

from scheduler.host_state import host_values
from scheduler.weighers import base


class IoOpsWeigher(base.BaseWeigher):
    multiplier_option = 'io_ops_weight_multiplier'

    def weigh_all(self, table, rows, request):
        return host_values.num_io_ops(table, rows)
