"""RAMWeigher, CPUWeigher, DiskWeigher: weigh by free amount, as nova does.

The amounts are nova's HostState numbers
(``scheduler.host_state.host_values``): RAMWeigher weighs the physical
``free_ram_mb`` the tracker reports, DiskWeigher ``min(free_disk_gb,
disk_available_least)``, neither scaled by allocation ratios; CPUWeigher
weighs ``vcpus * cpu_allocation_ratio - vcpus_used``. Claims held beyond
the reported usage are subtracted.

With a positive multiplier the emptiest hosts win (spread); with a negative
one the fullest hosts win (pack).
"""

from scheduler.host_state import host_values
from scheduler.weighers import base


class RAMWeigher(base.BaseWeigher):
    multiplier_option = 'ram_weight_multiplier'
    columns = host_values.RAM_COLUMNS

    def weigh_all(self, table, rows, request):
        return host_values.free_ram_mb(table, rows)


class CPUWeigher(base.BaseWeigher):
    multiplier_option = 'cpu_weight_multiplier'

    def weigh_all(self, table, rows, request):
        return host_values.vcpus_free(table, rows)


class DiskWeigher(base.BaseWeigher):
    multiplier_option = 'disk_weight_multiplier'
    columns = host_values.DISK_COLUMNS

    def weigh_all(self, table, rows, request):
        return host_values.free_disk_mb(table, rows)
