"""NumInstancesWeigher: weigh by the number of instances a host runs.

Weighs by the ``running_vms`` the tracker last reported (none reported
counts as 0), vectorized. Multiplier: ``[filter_scheduler]
num_instances_weight_multiplier``, -1.0 by default so instances spread onto
the hosts running the fewest; positive packs. (Nova's default is 0, which
disables the weigher; here leave it out of ``enabled_weighers`` instead.)
"""

from scheduler.weighers import base


class NumInstancesWeigher(base.BaseWeigher):
    multiplier_option = 'num_instances_weight_multiplier'

    def weigh_all(self, table, rows, request):
        return table.column('running_vms')[rows]
