"""SameHostFilter and DifferentHostFilter: scheduler hints ``same_host`` /
``different_host`` (lists of instance UUIDs).

The hosts of those instances (reported by trackers, or claimed and not yet
reported) are looked up once per request by the driver, into
``request.same_hosts`` / ``request.different_hosts``.
"""

import numpy as np

from scheduler.filters import base
from scheduler.filters.server_groups import _host_mask


class SameHostFilter(base.BaseFilter):

    def applies_to(self, request):
        return request.same_hosts is not None

    def filter_all(self, table, request):
        if not self.applies_to(request):
            return np.ones(table.size, dtype=bool)
        return _host_mask(table, request.same_hosts)


class DifferentHostFilter(base.BaseFilter):

    def applies_to(self, request):
        return bool(request.different_hosts)

    def filter_all(self, table, request):
        if not self.applies_to(request):
            return np.ones(table.size, dtype=bool)
        return ~_host_mask(table, request.different_hosts)
