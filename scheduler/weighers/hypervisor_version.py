"""HypervisorVersionWeigher: newer hypervisors win.

Weighs by the tracker's ``hypervisor_version`` (an integer such as 6002001
for 6.2.1; a host that reports none counts as 0), vectorized. Multiplier:
``[filter_scheduler] hypervisor_version_weight_multiplier`` (1.0; negative
prefers the oldest).
"""

from scheduler.weighers import base


class HypervisorVersionWeigher(base.BaseWeigher):
    multiplier_option = 'hypervisor_version_weight_multiplier'

    def weigh_all(self, table, rows, request):
        return table.column('hypervisor_version')[rows]
