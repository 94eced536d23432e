"""PCIWeigher: keep hosts with free PCI devices for those who need them.

Hosts with fewer free PCI devices (summed over the tracker's
``pci_device_pools``) weigh more, whatever the request: requests without
PCI devices stay off PCI hosts, and PCI requests (already filtered to
hosts that can take them) stack on the hosts with the fewest, keeping
large pools whole for large requests. Counts of 99 or more weigh alike, so
a shortage is what matters, not the difference between plentiful hosts.
Multiplier: ``[filter_scheduler] pci_weight_multiplier`` (1.0, positive).
"""

import numpy as np

from scheduler import pci
from scheduler.weighers import base

# as nova: 99 free devices or more weigh alike
_PLENTY = 99


class PCIWeigher(base.BaseWeigher):
    multiplier_option = 'pci_weight_multiplier'

    def weigh_all(self, table, rows, request):
        free = np.array([sum(count for _, count in
                             pci.host_pools(table.attributes[int(row)]))
                         for row in rows], dtype=np.float64)
        return -np.minimum(free, _PLENTY)
