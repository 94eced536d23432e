"""ComputeFilter: only enabled hosts whose tracker reported recently.

A host is out when it is disabled, or when its last report is older than
``[scheduler] service_down_time`` seconds.
"""

from scheduler.filters import base


class ComputeFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.service_down_time = conf.scheduler.service_down_time

    def filter_all(self, table, request):
        n = table.size
        up = (request.now - table.reported_at[:n]) <= self.service_down_time
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
