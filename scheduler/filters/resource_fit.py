"""ResourceFitFilter: hosts with room for VCPU, MEMORY_MB and DISK_GB.

Room is ``(total - reserved) * allocation_ratio`` minus usage, where usage
is the larger of the tracker's report and the claims held. The amount must
also lie within the inventory's ``min_unit``/``max_unit`` and be a multiple
of its ``step_size``: the rule of ``scheduler.model.fit``.
"""

import collections

import numpy as np

from scheduler.model import fit
from scheduler.filters import base


class ResourceFitFilter(base.BaseFilter):
    applies_fit_rule = True

    def filter_all(self, table, request):
        mask = np.ones(table.size, dtype=bool)
        for rc, amount in request.resources.items():
            mask &= self._fits(table, rc, amount)
        return mask

    @staticmethod
    def _fits(table, rc, amount):
        # the rule the driver and the claim's SQL apply too
        return fit.column_fits(table, rc, amount)

    def explain(self, table, request, removed_rows):
        """Count removed hosts by the first resource class they lack."""
        short = collections.Counter()
        remaining = np.asarray(removed_rows)
        for rc, amount in sorted(request.resources.items()):
            if not len(remaining):
                break
            lacks = ~self._fits(table, rc, amount)[remaining]
            short[rc] += int(lacks.sum())
            remaining = remaining[~lacks]
        return ', '.join('%s: %d' % (rc, count)
                         for rc, count in short.items() if count) or None
