"""ComputeFilter: only enabled hosts whose tracker reported recently.

A host is out when it is disabled, or when its last report is older than
``[scheduler] service_down_time`` seconds, unless most hosts fell
silent at once (``scheduler.host_state.disruption``: then the scheduler,
not the hosts, was cut off, and trackers get a period to report again).
"""

from scheduler.host_state import disruption
from scheduler.filters import base


class ComputeFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.service_down_time = conf.scheduler.service_down_time
        # a silence of most hosts at once is the scheduler's outage
        self.grace = disruption.DisruptionGrace(
            self.service_down_time, conf.scheduler.disruption_threshold)

    def filter_all(self, table, request):
        n = table.size
        up = self.grace.reporting(table.reported_at[:n], request.now)
        return up & ~table.disabled[:n]

    def explain(self, table, request, removed_rows):
        disabled = int(table.disabled[removed_rows].sum())
        down = len(removed_rows) - disabled
        parts = []
        if disabled:
            parts.append('%d disabled' % disabled)
        if down:
            parts.append('%d not reporting for %ds' %
                         (down, self.service_down_time))
        return ', '.join(parts) or None
