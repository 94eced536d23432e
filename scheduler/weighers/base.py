"""The weigher contract: ``weigh_all(table, rows, request) -> floats``."""

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


def normalize(weights):
    """Scale to 0..1; all-equal weights become 0."""
    weights = np.asarray(weights, dtype=np.float64)
    if not len(weights):
        return weights
    low, high = weights.min(), weights.max()
    if high == low:
        return np.zeros_like(weights)
    return (weights - low) / (high - low)
