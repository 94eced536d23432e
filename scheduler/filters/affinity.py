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

    def filter_all(self, table, request):
        if request.same_hosts is None:
            return np.ones(table.size, dtype=bool)
        return _host_mask(table, request.same_hosts)


class DifferentHostFilter(base.BaseFilter):

    def filter_all(self, table, request):
        if not request.different_hosts:
            return np.ones(table.size, dtype=bool)
        return ~_host_mask(table, request.different_hosts)
