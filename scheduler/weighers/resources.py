"""RAMWeigher, CPUWeigher, DiskWeigher: weigh by free amount.

With a positive multiplier the emptiest hosts win (spread); with a negative
one the fullest hosts that still fit win (pack).
"""

from scheduler import resource_classes as rcs
from scheduler.weighers import base


class _FreeResourceWeigher(base.BaseWeigher):
    resource_class = None

    def weigh_all(self, table, rows, request):
        return table.free(self.resource_class, rows).astype(float)


class RAMWeigher(_FreeResourceWeigher):
    resource_class = rcs.MEMORY_MB
    multiplier_option = 'ram_weight_multiplier'


class CPUWeigher(_FreeResourceWeigher):
    resource_class = rcs.VCPU
    multiplier_option = 'cpu_weight_multiplier'


class DiskWeigher(_FreeResourceWeigher):
    resource_class = rcs.DISK_GB
    multiplier_option = 'disk_weight_multiplier'
