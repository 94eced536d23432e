"""AvailabilityZoneFilter: hosts in the requested availability zone.

Requests without an availability zone pass everywhere.
"""

import numpy as np

from scheduler.filters import base


class AvailabilityZoneFilter(base.BaseFilter):

    def applies_to(self, request):
        return bool(request.availability_zone)

    def filter_all(self, table, request):
        if not self.applies_to(request):
            return np.ones(table.size, dtype=bool)
        wanted = table.az_lookup(request.availability_zone)
        return table.az[:table.size] == wanted

    def explain(self, table, request, removed_rows):
        return 'not in zone %r' % request.availability_zone
