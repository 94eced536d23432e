"""NumInstancesFilter: hosts running fewer than ``max_instances_per_host``.

A host passes when nova's ``num_instances``, the ``num_instances`` in its
tracker's stats (``running_vms`` for trackers that are not nova's), is
below ``[filter_scheduler] max_instances_per_host``. Instances placed since
that report are not counted until the next one. A host that reports none
counts as empty. Vectorized over the table.
"""

from scheduler.filters import base
from scheduler.host_state import host_values


class NumInstancesFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.max_instances = conf.filter_scheduler.max_instances_per_host

    def filter_all(self, table, request):
        return host_values.num_instances(table) < self.max_instances

    def explain(self, table, request, removed_rows):
        return 'max_instances_per_host=%d reached' % self.max_instances
