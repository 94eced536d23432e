"""The worker's /metrics endpoint: a scrape shows the recorder's snapshot
in the Prometheus text format, labelled with host and worker."""

import urllib.request

from prometheus_client import parser

from scheduler.service import metrics_endpoint
from scheduler_bench import servers

SNAPSHOT = {
    'decisions': 7, 'instances': 9, 'claim_conflicts': 2,
    'no_valid_host': 1, 'reports_written': 40, 'reports_unchanged': 3,
    'max_refresh_lag_s': 0.25,
    'filter': {'count': 7, 'total_s': 0.014, 'p50_ms': 1.5, 'p99_ms': 4.0,
               'max_ms': 4.0},
    'claim': {'count': 0},
}


class FakeRecorder:
    def snapshot(self):
        return {k: dict(v) if isinstance(v, dict) else v
                for k, v in SNAPSHOT.items()}


def _free_port():
    return servers.free_ports()


def _scrape(port):
    with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port,
                                timeout=5) as response:
        text = response.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in parser.text_string_to_metric_families(text)
            for s in family.samples}


def test_a_scrape_shows_counters_phases_and_lag(conf):
    port = _free_port()
    conf.set_override('port', port - 1, 'prometheus')
    conf.set_override('host', 'sched-a')
    server = metrics_endpoint.serve(conf, FakeRecorder(), 1)
    try:
        samples = _scrape(port)
    finally:
        server.shutdown()
    who = (('host', 'sched-a'), ('worker', '1'))
    assert samples[('scheduler_decisions_total', who)] == 7
    assert samples[('scheduler_no_valid_host_total', who)] == 1
    assert samples[('scheduler_claim_conflicts_total', who)] == 2
    assert samples[('scheduler_reports_written_total', who)] == 40
    assert samples[('scheduler_refresh_lag_max_seconds', who)] == 0.25
    filter_phase = tuple(sorted(who + (('phase', 'filter'),)))
    assert samples[('scheduler_phase_seconds_count', filter_phase)] == 7
    assert samples[('scheduler_phase_seconds_sum', filter_phase)] == 0.014
    p99 = tuple(sorted(filter_phase + (('quantile', '0.99'),)))
    assert samples[('scheduler_phase_quantile_seconds', p99)] == 0.004
    claim = tuple(sorted(who + (('phase', 'claim'),)))
    assert samples[('scheduler_phase_seconds_count', claim)] == 0


def test_disabled_by_default(conf):
    assert conf.prometheus.port == 0
    assert metrics_endpoint.serve(conf, FakeRecorder(), 0) is None
