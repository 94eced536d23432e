"""ServerGroupAffinityFilter and ServerGroupAntiAffinityFilter.

Hard policies of the request's server group: affinity keeps only the host
the group already uses (any host if it has no member yet); anti-affinity
removes hosts that already run ``max_server_per_host`` members (rule of the
group, default 1). A host's members are counted as nova counts them, the
group's members among the instances its tracker reports, or the members
this scheduler's claims placed there if more (``driver.server_groups``).
The same policies are enforced again when the claim is written, so
concurrent workers cannot break them; that is why the group is core
request state, not a plugin's: the driver loads it (``request.group``, a
``GroupPlacement``) before the plugins' preload hooks run, and these
filters only read it.
"""

import numpy as np

from scheduler.filters import base


def _host_mask(table, hosts):
    mask = np.zeros(table.size, dtype=bool)
    for host in hosts:
        mask[table.rows_of_host(host)] = True
    return mask


class ServerGroupAffinityFilter(base.BaseFilter):

    def applies_to(self, request):
        group = request.group
        return bool(group is not None and group.policy == 'affinity'
                    and group.hosts)

    def filter_all(self, table, request):
        group = request.group
        if not self.applies_to(request):
            return np.ones(table.size, dtype=bool)
        return _host_mask(table, group.hosts)

    def explain(self, table, request, removed_rows):
        return 'group %s is on %s' % (request.group.uuid,
                                      ', '.join(sorted(request.group.hosts)))


class ServerGroupAntiAffinityFilter(base.BaseFilter):

    def applies_to(self, request):
        group = request.group
        return group is not None and group.policy == 'anti-affinity'

    def filter_all(self, table, request):
        group = request.group
        if not self.applies_to(request):
            return np.ones(table.size, dtype=bool)
        full = [h for h, n in group.hosts.items()
                if n >= group.max_per_host]
        return ~_host_mask(table, full)

    def explain(self, table, request, removed_rows):
        return 'already %d member(s) of group %s' % (
            request.group.max_per_host, request.group.uuid)
