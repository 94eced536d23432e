"""AllHostsFilter: passes every host (useful to disable filtering)."""

import numpy as np

from scheduler.filters import base


class AllHostsFilter(base.BaseFilter):

    def filter_all(self, table, request):
        return np.ones(table.size, dtype=bool)
