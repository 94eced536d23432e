"""A worker's HTTP endpoint: ``/metrics`` (Prometheus) and ``/healthcheck``.

``serve(conf, recorder, worker, health=None)`` starts the endpoint of one
worker on ``[prometheus] host`` and ``port + worker`` (a daemon thread)
and returns the server (``shutdown()`` stops it), or None when
``[prometheus] port`` is 0. Paths:

* ``GET /metrics``: the Prometheus text format (below);
* ``GET /healthcheck``: ``200 OK`` or ``503`` with one line per problem
  of ``health.problems()`` (``scheduler.service.health``: database or
  message broker unreachable, host table not loaded, no report for N s);
  200 when no ``health`` was given;
* anything else: 404.

Metrics, every sample labelled ``host`` and ``worker``:

* ``scheduler_<counter>_total`` for every counter of the recorder's
  ``snapshot()`` (``decisions``, ``instances``, ``claim_conflicts``,
  ``no_valid_host``, ``reports_written``, ``reports_unchanged`` ...);
* ``scheduler_phase_seconds{phase=...}``: a summary (count, sum) per
  phase (``refresh``, ``filter``, ``weigh``, ``claim``, ``total`` ...)
  over the recent window, with ``scheduler_phase_quantile_seconds`` and
  ``scheduler_phase_max_seconds``, kept as they were;
* ``scheduler_phase_duration_seconds{phase=...}``: a histogram of every
  decision since the worker started (use it for latency SLOs);
* ``scheduler_filter_rejected_hosts_total{filter=...}`` and
  ``scheduler_rpc_errors_total{method=...,exception=...}``,
  ``scheduler_solver_requests_total{outcome=...}``;
* ``scheduler_refresh_lag_max_seconds``;
* ``scheduler_hosts{state=known|up|down}`` when ``health`` is given;
* ``scheduler_build_info{version=...,rpc_version=...}`` (1), and
  prometheus_client's ``process_*`` metrics (CPU, memory, open files,
  start time).

Counters live in the worker process and restart from 0 when the worker
does (a crash, a SIGHUP that replaces it): Prometheus' ``rate()`` and
``increase()`` treat a drop as a reset, and ``process_start_time_seconds``
tells when it happened (doc/source/admin/health.rst).
"""

import socketserver
import threading
from wsgiref import simple_server

import prometheus_client
from oslo_log import log as logging
from prometheus_client import core

from scheduler import version

LOG = logging.getLogger(__name__)
_PHASE_KEYS = {'count', 'total_s', 'p50_ms', 'p99_ms', 'max_ms'}


def _is_phase(value):
    return isinstance(value, dict) and 'count' in value and set(
        value) <= _PHASE_KEYS


class SnapshotCollector:
    """A prometheus_client collector reading the recorder (and the
    worker's ``health`` for the host gauges)."""

    def __init__(self, recorder, labels, health=None):
        self.recorder = recorder
        self.health = health
        self.label_names = sorted(labels)
        self.label_values = [str(labels[k]) for k in self.label_names]

    def _family(self, kind, name, doc, extra=()):
        return kind(name, doc, labels=self.label_names + list(extra))

    def collect(self):
        yield from self._snapshot(self.recorder.snapshot())
        if hasattr(self.recorder, 'totals'):
            yield from self._totals(self.recorder.totals())
        yield from self._build_and_hosts()

    def _snapshot(self, snapshot):
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
                yield self._one(core.GaugeMetricFamily,
                                'scheduler_refresh_lag_max_seconds',
                                'Oldest host view a decision read', value)
            elif isinstance(value, (int, float)):
                yield self._one(core.CounterMetricFamily,
                                'scheduler_%s' % name,
                                'Scheduler %s' % name.replace('_', ' '),
                                value)
        yield phases
        yield quantiles
        yield maxima

    def _one(self, kind, name, doc, value):
        family = self._family(kind, name, doc)
        family.add_metric(self.label_values, value)
        return family

    def _totals(self, totals):
        histogram = self._family(core.HistogramMetricFamily,
                                 'scheduler_phase_duration_seconds',
                                 'Seconds per decision phase, every '
                                 'decision', ['phase'])
        for phase, h in sorted(totals['histograms'].items()):
            histogram.add_metric(
                self.label_values + [phase],
                [(_bound(b), n) for b, n in h['buckets']], h['sum'])
        yield histogram
        rejected = self._family(core.CounterMetricFamily,
                                'scheduler_filter_rejected_hosts',
                                'Hosts a filter removed', ['filter'])
        for name, hosts in sorted(totals['rejected'].items()):
            rejected.add_metric(self.label_values + [name], hosts)
        yield rejected
        errors = self._family(core.CounterMetricFamily,
                              'scheduler_rpc_errors',
                              'RPC calls answered with an exception',
                              ['method', 'exception'])
        for (method, name), count in sorted(totals['rpc_errors'].items()):
            errors.add_metric(self.label_values + [method, name], count)
        yield errors
        solver = self._family(core.CounterMetricFamily,
                              'scheduler_solver_requests',
                              'Requests the solver driver handled, by '
                              'outcome (solved, greedy, or why it fell '
                              'back to the greedy plan)', ['outcome'])
        for outcome, count in sorted(totals.get('solver', {}).items()):
            solver.add_metric(self.label_values + [outcome], count)
        yield solver

    def _build_and_hosts(self):
        build = self._family(core.GaugeMetricFamily, 'scheduler_build_info',
                             'The release this worker runs',
                             ['version', 'rpc_version'])
        build.add_metric(self.label_values + [version.release(),
                                              version.RPC_API_VERSION], 1)
        yield build
        counts = self.health.hosts() if self.health is not None else None
        if counts is None:
            return
        hosts = self._family(core.GaugeMetricFamily, 'scheduler_hosts',
                             'Hosts in the table, up (reporting) or down',
                             ['state'])
        for state, count in zip(('known', 'up', 'down'), counts):
            hosts.add_metric(self.label_values + [state], count)
        yield hosts


def _bound(bound):
    return '+Inf' if bound == float('inf') else repr(float(bound))


def application(registry, health=None):
    """The WSGI application of one worker's endpoint (module docstring)."""
    metrics = prometheus_client.make_wsgi_app(registry)

    def app(environ, start_response):
        path = environ.get('PATH_INFO', '/')
        if path == '/metrics':
            return metrics(environ, start_response)
        if path == '/healthcheck':
            problems = health.problems() if health is not None else []
            body = ('\n'.join(problems) if problems else 'OK') + '\n'
            start_response('503 Service Unavailable' if problems
                           else '200 OK',
                           [('Content-Type', 'text/plain; charset=utf-8')])
            return [body.encode()]
        start_response('404 Not Found', [('Content-Type', 'text/plain')])
        return [b'Not found: /metrics and /healthcheck are served\n']
    return app


class _ThreadingServer(socketserver.ThreadingMixIn,
                       simple_server.WSGIServer):
    daemon_threads = True


class _QuietHandler(simple_server.WSGIRequestHandler):
    def log_message(self, format, *args):  # scrapes are not log lines
        pass


def serve(conf, recorder, worker, health=None):
    """Start worker ``worker``'s endpoint; None if disabled."""
    if not conf.prometheus.port or recorder is None:
        return None
    registry = prometheus_client.CollectorRegistry()
    registry.register(SnapshotCollector(
        recorder, {'host': conf.host, 'worker': worker}, health))
    prometheus_client.ProcessCollector(registry=registry)
    port = conf.prometheus.port + worker
    server = simple_server.make_server(
        conf.prometheus.host, port, application(registry, health),
        server_class=_ThreadingServer, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True,
                     name='metrics-endpoint').start()
    LOG.info('Worker %d metrics at http://%s:%d/metrics', worker,
             conf.prometheus.host, port)
    return server
