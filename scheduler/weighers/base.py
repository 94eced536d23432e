"""The weigher contract: ``weigh_all(table, rows, request) -> floats``.

The multiplier comes from ``[filter_scheduler] <multiplier_option>``; an
aggregate whose metadata sets the same key (e.g.
``ram_weight_multiplier=-1.0``) overrides it for its hosts (the smallest
value wins when several aggregates of a host set it; as in nova, if one
of them is not a number the configured multiplier applies).
"""

import math

import numpy as np


class BaseWeigher:

    #: name of the [filter_scheduler] option holding the multiplier
    multiplier_option = None

    def __init__(self, conf):
        self.conf = conf
        self.multiplier = (getattr(conf.filter_scheduler,
                                   self.multiplier_option)
                           if self.multiplier_option else 1.0)

    @property
    def name(self):
        return type(self).__name__

    def weigh_all(self, table, rows, request):
        raise NotImplementedError

    def multipliers(self, table, rows):
        """The multiplier of each row: config, or aggregate override."""
        values = np.full(len(rows), self.multiplier, dtype=np.float64)
        if not self.multiplier_option:
            return values
        found = {}
        for agg in table.aggregates.with_metadata(self.multiplier_option):
            for host in agg['hosts']:
                found.setdefault(host, set()).add(
                    agg['metadata'][self.multiplier_option])
        overrides = {}
        for host, texts in found.items():
            try:
                value = min(float(t) for t in texts)
            except ValueError:
                continue  # as nova: one bad value, the configured one
            if math.isfinite(value):
                # nan or inf would poison every sum
                overrides[host] = value
        if overrides:
            for index, row in enumerate(rows):
                value = overrides.get(table.hosts[row])
                if value is not None:
                    values[index] = value
        return values


def normalize(weights):
    """Scale to 0..1; all-equal weights become 0."""
    weights = np.asarray(weights, dtype=np.float64)
    if not len(weights):
        return weights
    low, high = weights.min(), weights.max()
    if high == low:
        return np.zeros_like(weights)
    return (weights - low) / (high - low)
