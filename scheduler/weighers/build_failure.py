"""BuildFailureWeigher: hosts where builds recently failed sink.

The weight is minus the host's ``failed_builds`` count, which
``SchedulerClient.build_failed`` increments and a tracker report carrying
``failed_builds`` (e.g. 0 after a good build) resets. With the default,
very large multiplier a failing host goes behind every healthy one.
"""

from scheduler.weighers import base


class BuildFailureWeigher(base.BaseWeigher):
    multiplier_option = 'build_failure_weight_multiplier'

    def uniform(self, table, rows, request):
        # no host of the table has failed a build lately (the common
        # case): one pass over a column instead of weighing every row
        return not table.failed_builds[:table.size].any()

    def weigh_all(self, table, rows, request):
        return -table.failed_builds[rows].astype(float)

