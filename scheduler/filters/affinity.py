"""SameHostFilter and DifferentHostFilter: scheduler hints ``same_host`` /
``different_host`` (lists of instance UUIDs, checked at the RPC edge).

Each filter's preload hook (``scheduler.filters.base``) looks up, once per
planning attempt, the hosts of those instances: reported by trackers, or
claimed and not yet reported. Without the hint there is nothing to load
and the filter does not apply.
"""

import numpy as np

from scheduler.filters import base
from scheduler.filters.server_groups import _host_mask


class _InstanceHostsFilter(base.BaseFilter):
    """Preloads the hosts of the instances named by hint ``hint``."""

    hint = None

    def preload(self, request, store):
        uuids = request.hints.get(self.hint)
        if uuids is None:
            return None
        return store.instance_hosts(uuids)


class SameHostFilter(_InstanceHostsFilter):
    hint = 'same_host'

    def applies_to(self, request):
        # a hint whose instances are nowhere lets no host through
        return self.preloaded(request) is not None

    def filter_all(self, table, request):
        if not self.applies_to(request):
            return np.ones(table.size, dtype=bool)
        return _host_mask(table, self.preloaded(request))


class DifferentHostFilter(_InstanceHostsFilter):
    hint = 'different_host'

    def applies_to(self, request):
        return bool(self.preloaded(request))

    def filter_all(self, table, request):
        if not self.applies_to(request):
            return np.ones(table.size, dtype=bool)
        return ~_host_mask(table, self.preloaded(request))
