"""MetricsFilter: hosts that report every metric MetricsWeigher weighs.

The metric names come from ``[metrics] weight_setting``; a host passes
when its tracker's ``metrics`` include all of them with a numeric value.
With no weight_setting every host passes. Enable it with MetricsWeigher
and ``[metrics] required = True`` so that a host lacking a metric is
filtered out instead of failing the request.
"""

from scheduler.model import host_metrics
from scheduler.filters import base

_EXPLAIN_SAMPLE = 50


class MetricsFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.names = frozenset(
            name for name, _ in
            host_metrics.parse_weight_setting(conf.metrics.weight_setting))

    def applies_to(self, request):
        return bool(self.names)

    def _missing(self, host):
        return self.names.difference(
            host_metrics.host_metrics(host.attributes))

    def host_passes(self, host, request):
        return not self._missing(host)

    def explain(self, table, request, removed_rows):
        missing = set()
        # a sample is enough to name the metrics that are missing
        for row in removed_rows[:_EXPLAIN_SAMPLE]:
            missing |= self._missing(table.view(int(row)))
        return 'missing metrics: %s' % ', '.join(sorted(missing))
