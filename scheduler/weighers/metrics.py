"""MetricsWeigher: weigh by a weighted sum of host metrics.

A host's weight is ``sum(value * ratio)`` over the ``[metrics]
weight_setting`` pairs, using the metrics its tracker reports. When a host
lacks one of them: with ``[metrics] required`` (the default) the request
fails with NoValidHost naming host and metric (enable MetricsFilter to
remove such hosts first); otherwise the host weighs ``[metrics]
weight_of_unavailable``. Multiplier: ``[filter_scheduler]
metrics_weight_multiplier``. An empty weight_setting weighs every host 0.
"""

import numpy as np

from scheduler import exception
from scheduler import metrics
from scheduler.weighers import base


class MetricsWeigher(base.BaseWeigher):
    multiplier_option = 'metrics_weight_multiplier'

    def __init__(self, conf):
        super().__init__(conf)
        self.setting = metrics.parse_weight_setting(
            conf.metrics.weight_setting)
        self.required = conf.metrics.required
        self.weight_of_unavailable = conf.metrics.weight_of_unavailable

    def _weigh(self, table, row):
        reported = metrics.host_metrics(table.attributes[row])
        weight = 0.0
        for name, ratio in self.setting:
            if name in reported:
                weight += reported[name] * ratio
            elif self.required:
                raise exception.NoValidHost(
                    reason='host %s does not report metric %s required by '
                    '[metrics] weight_setting; enable MetricsFilter or set '
                    '[metrics] required = False' % (table.hosts[row], name))
            elif ratio:
                return self.weight_of_unavailable
        return weight

    def weigh_all(self, table, rows, request):
        if not self.setting:
            return np.zeros(len(rows))
        return np.array([self._weigh(table, int(row)) for row in rows],
                        dtype=np.float64)
