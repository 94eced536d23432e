"""NumInstancesWeigher: weigh by the number of instances a host has.

Weighs by nova's ``num_instances``: the ``num_instances`` in the tracker's
stats (see ``scheduler.host_state.host_values`` for trackers that do not
report it), vectorized. Multiplier: ``[filter_scheduler]
num_instances_weight_multiplier``, -1.0 by default so instances spread onto
the hosts running the fewest; positive packs. (Nova's default is 0, which
disables the weigher; here leave it out of ``enabled_weighers`` instead.)
"""

from scheduler.host_state import host_values
from scheduler.weighers import base


class NumInstancesWeigher(base.BaseWeigher):
    multiplier_option = 'num_instances_weight_multiplier'

    def weigh_all(self, table, rows, request):
        return host_values.num_instances(table, rows)
