"""The offline capacity oracle of the ``fill`` scenario.

It keeps its own ledger of every host's capacity and usage, fed only with
what the cluster was populated with and the destinations the scheduler
returned, and answers "does this request fit anywhere?" with a plain
numpy scan. A ``NoValidHost`` from the scheduler when the oracle finds a
host is a *false* NoValidHost. It also says how much capacity is stranded:
free, but on hosts where not even the smallest flavor fits.

    oracle = CapacityOracle(capacity, used, zones)
    oracle.fits_anywhere({'VCPU': 2, 'MEMORY_MB': 4096})    # True
    oracle.place(row, {'VCPU': 2, 'MEMORY_MB': 4096})
"""

import numpy as np


class CapacityOracle:
    """Capacity and usage per host and resource class (int64 arrays).

    ``capacity`` and ``used`` map a resource class to an array with one
    entry per host; ``zones`` (optional) holds each host's availability
    zone; ``min_unit``/``max_unit`` (optional) bound one allocation.
    """

    def __init__(self, capacity, used, zones=None, min_unit=None,
                 max_unit=None):
        self.capacity = {rc: np.asarray(v, dtype=np.int64).copy()
                         for rc, v in capacity.items()}
        self.used = {rc: np.asarray(used[rc], dtype=np.int64).copy()
                     for rc in self.capacity}
        self.size = len(next(iter(self.capacity.values()), []))
        self.zones = None if zones is None else np.asarray(zones,
                                                           dtype=object)
        self.min_unit = min_unit or {}
        self.max_unit = max_unit or {}

    def free(self, rc):
        return self.capacity[rc] - self.used[rc]

    def fit_mask(self, resources, zone=None):
        """Hosts where ``resources`` fit now (in ``zone`` if given)."""
        mask = np.ones(self.size, dtype=bool)
        if zone is not None and self.zones is not None:
            mask &= self.zones == zone
        for rc, amount in resources.items():
            if rc not in self.capacity:
                return np.zeros(self.size, dtype=bool)
            mask &= self.free(rc) >= amount
            if rc in self.max_unit:
                mask &= np.asarray(self.max_unit[rc]) >= amount
            if rc in self.min_unit:
                mask &= np.asarray(self.min_unit[rc]) <= amount
        return mask

    def fits_anywhere(self, resources, zone=None):
        return bool(self.fit_mask(resources, zone).any())

    def feasible(self, resources, zone=None):
        """How many hosts could take ``resources`` now."""
        return int(self.fit_mask(resources, zone).sum())

    def place(self, row, resources):
        """Record that ``resources`` went to host ``row``."""
        for rc, amount in resources.items():
            self.used[rc][row] += amount

    def overcommitted(self):
        """Rows whose usage exceeds capacity in some resource class."""
        mask = np.zeros(self.size, dtype=bool)
        for rc, cap in self.capacity.items():
            mask |= self.used[rc] > cap
        return np.flatnonzero(mask)

    def utilization(self):
        """Used share of the whole cluster's capacity, per class."""
        return {rc: float(self.used[rc].sum()) / max(int(cap.sum()), 1)
                for rc, cap in self.capacity.items()}

    def stranded(self, smallest):
        """Share of each class's capacity that is free but unusable.

        A host's free capacity is stranded when the ``smallest`` request
        (a resources dict) does not fit on it any more, because some other
        class ran out there first.
        """
        dead = ~self.fit_mask(smallest)
        return {rc: float(np.clip(self.free(rc), 0, None)[dead].sum())
                / max(int(cap.sum()), 1)
                for rc, cap in self.capacity.items()}
