"""ServerGroupSoftAffinityWeigher and ServerGroupSoftAntiAffinityWeigher.

Soft policies are preferences, not rules: hosts running more members of
the request's soft-affinity group weigh more; for soft-anti-affinity,
hosts running fewer members weigh more. Members placed earlier in the same
request count too. Requests of other policies get equal weights. The
group is request state the driver loads (``request.group``, see
``scheduler.filters.server_groups``): no preload hook of their own.
"""

import numpy as np

from scheduler.weighers import base


def _other_policy(request, policy):
    # every host weighs 0: the common case, a request without a group
    group = request.group
    return group is None or group.policy != policy


def _members(table, rows, request, policy):
    if _other_policy(request, policy):
        return np.zeros(len(rows))
    return table.per_host(request.group.hosts, rows)


class ServerGroupSoftAffinityWeigher(base.BaseWeigher):
    multiplier_option = 'soft_affinity_weight_multiplier'

    def uniform(self, table, rows, request):
        return _other_policy(request, 'soft-affinity')

    def weigh_all(self, table, rows, request):
        return _members(table, rows, request, 'soft-affinity')


class ServerGroupSoftAntiAffinityWeigher(base.BaseWeigher):
    multiplier_option = 'soft_anti_affinity_weight_multiplier'

    def uniform(self, table, rows, request):
        return _other_policy(request, 'soft-anti-affinity')

    def weigh_all(self, table, rows, request):
        return -_members(table, rows, request, 'soft-anti-affinity')
