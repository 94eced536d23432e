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
from scheduler.model import host_metrics
from scheduler.weighers import base


class MetricsWeigher(base.BaseWeigher):
    multiplier_option = 'metrics_weight_multiplier'

    def __init__(self, conf):
        super().__init__(conf)
        self.setting = host_metrics.parse_weight_setting(
            conf.metrics.weight_setting)
        self.required = conf.metrics.required
        self.weight_of_unavailable = conf.metrics.weight_of_unavailable

    def weigh_all(self, table, rows, request):
        if not self.setting:
            return np.zeros(len(rows))
        # one column per metric, kept by the table as hosts report
        reported = np.array([table.column('metrics.' + name, np.nan)[rows]
                             for name, _ in self.setting]).reshape(
                                 len(self.setting), len(rows))
        missing = np.isnan(reported)
        if self.required and missing.any():
            self._refuse(table, rows, missing)
        ratios = np.array([ratio for _, ratio in self.setting])
        weights = (np.where(missing, 0.0, reported) * ratios[:, None]).sum(
            axis=0)
        unavailable = (missing & (ratios != 0)[:, None]).any(axis=0)
        weights[unavailable] = self.weight_of_unavailable
        return weights

    def _refuse(self, table, rows, missing):
        """NoValidHost naming the first host that lacks a metric."""
        index = int(np.flatnonzero(missing.any(axis=0))[0])
        name = self.setting[int(np.flatnonzero(missing[:, index])[0])][0]
        raise exception.NoValidHost(
            reason='host %s does not report metric %s required by '
            '[metrics] weight_setting; enable MetricsFilter or set '
            '[metrics] required = False' % (table.hosts[int(rows[index])],
                                             name))
