"""A worker's decision metrics in the Prometheus text format.

``SnapshotCollector(recorder, labels)`` turns the read API of
``scheduler.driver.decision_recorder.DecisionRecorder`` (``snapshot()``:
counters, the largest refresh lag, and per phase a count, total seconds and
p50/p99/max milliseconds) into metric families, read at every scrape:

* ``scheduler_<counter>_total`` for every counter of the snapshot
  (``decisions``, ``instances``, ``claim_conflicts``, ``no_valid_host``,
  ``reports_written``, ``reports_unchanged`` ...);
* ``scheduler_phase_seconds{phase=...}``: a summary (count, sum, and the
  0.5 / 0.99 quantiles) per phase (``refresh``, ``filter``, ``weigh``,
  ``claim``, ``total`` ...), plus ``scheduler_phase_max_seconds``;
* ``scheduler_refresh_lag_max_seconds``.

Every sample carries ``host`` and ``worker`` labels. ``serve(conf,
recorder, worker)`` starts the endpoint of one worker on ``[prometheus]
host`` and ``port + worker`` (a daemon thread) and returns the server, or
None when ``[prometheus] port`` is 0.
"""

import prometheus_client
from oslo_log import log as logging
from prometheus_client import core

LOG = logging.getLogger(__name__)
_PHASE_KEYS = {'count', 'total_s', 'p50_ms', 'p99_ms', 'max_ms'}


def _is_phase(value):
    return isinstance(value, dict) and 'count' in value and set(
        value) <= _PHASE_KEYS


class SnapshotCollector:
    """A prometheus_client collector reading ``recorder.snapshot()``."""

    def __init__(self, recorder, labels):
        self.recorder = recorder
        self.label_names = sorted(labels)
        self.label_values = [str(labels[k]) for k in self.label_names]

    def _family(self, kind, name, doc, extra=()):
        return kind(name, doc, labels=self.label_names + list(extra))

    def collect(self):
        snapshot = self.recorder.snapshot()
        phases = self._family(core.SummaryMetricFamily,
                              'scheduler_phase_seconds',
                              'Seconds per decision phase', ['phase'])
        quantiles = self._family(core.GaugeMetricFamily,
                                 'scheduler_phase_quantile_seconds',
                                 'Recent p50/p99 seconds per phase',
                                 ['phase', 'quantile'])
        maxima = self._family(core.GaugeMetricFamily,
                              'scheduler_phase_max_seconds',
                              'Slowest recent decision phase', ['phase'])
        for name, value in sorted(snapshot.items()):
            if _is_phase(value):
                labels = self.label_values + [name]
                phases.add_metric(labels, value['count'],
                                  value.get('total_s', 0.0))
                for key, q in (('p50_ms', '0.5'), ('p99_ms', '0.99')):
                    if key in value:
                        quantiles.add_metric(labels + [q], value[key] / 1e3)
                if 'max_ms' in value:
                    maxima.add_metric(labels, value['max_ms'] / 1e3)
            elif name == 'max_refresh_lag_s':
                gauge = self._family(core.GaugeMetricFamily,
                                     'scheduler_refresh_lag_max_seconds',
                                     'Oldest host view a decision read')
                gauge.add_metric(self.label_values, value)
                yield gauge
            elif isinstance(value, (int, float)):
                counter = self._family(core.CounterMetricFamily,
                                       'scheduler_%s' % name,
                                       'Scheduler %s' % name.replace(
                                           '_', ' '))
                counter.add_metric(self.label_values, value)
                yield counter
        yield phases
        yield quantiles
        yield maxima


def serve(conf, recorder, worker):
    """Start worker ``worker``'s endpoint; None if disabled."""
    if not conf.prometheus.port or recorder is None:
        return None
    registry = prometheus_client.CollectorRegistry()
    registry.register(SnapshotCollector(
        recorder, {'host': conf.host, 'worker': worker}))
    port = conf.prometheus.port + worker
    server, _ = prometheus_client.start_http_server(
        port, addr=conf.prometheus.host, registry=registry)
    LOG.info('Worker %d metrics at http://%s:%d/metrics', worker,
             conf.prometheus.host, port)
    return server
