"""The metrics port answers /healthcheck (200 or 503 with what is wrong)
and 404 elsewhere, and shows build, process, histogram, per-filter and
RPC-error metrics (issue 23.8)."""

import types
import urllib.error
import urllib.request

import numpy
from prometheus_client import parser

from scheduler.db import api as db_api
from scheduler.driver import decision_recorder
from scheduler.service import health as health_mod
from scheduler.service import metrics_endpoint
from tests.unit.service.test_metrics_endpoint import _free_port


def _get(port, path):
    try:
        with urllib.request.urlopen('http://127.0.0.1:%d%s' % (port, path),
                                    timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


class FakeHealth:
    def __init__(self, problems):
        self._problems = problems

    def problems(self):
        return self._problems

    def hosts(self):
        return 5, 4, 1


def _serve(conf, recorder, health):
    port = _free_port()
    conf.set_override('port', port, 'prometheus')
    return port, metrics_endpoint.serve(conf, recorder, 0, health=health)


def test_healthcheck_and_unknown_paths(conf):
    recorder = decision_recorder.DecisionRecorder()
    for problems, code in (([], 200), (['database unreachable: refused',
                                        'no report for 90 s'], 503)):
        port, server = _serve(conf, recorder, FakeHealth(problems))
        try:
            status, body = _get(port, '/healthcheck')
            assert status == code
            assert body.splitlines() == (problems or ['OK'])
            assert _get(port, '/')[0] == 404
            assert _get(port, '/metricsx')[0] == 404
        finally:
            server.shutdown()
            server.server_close()


def test_new_metrics(conf):
    recorder = decision_recorder.DecisionRecorder()
    recorder.decision({'filter': 0.003, 'total': 0.004}, 1)
    recorder.rejected('RamFilter', 7)
    recorder.rpc_error('select_destinations', 'NoValidHost')
    port, server = _serve(conf, recorder, FakeHealth([]))
    try:
        status, text = _get(port, '/metrics')
    finally:
        server.shutdown()
        server.server_close()
    samples = {(s.name, tuple(sorted((k, v) for k, v in s.labels.items()
                                     if k not in ('host', 'worker')))):
               s.value for f in parser.text_string_to_metric_families(text)
               for s in f.samples}
    assert samples[('scheduler_filter_rejected_hosts_total',
                    (('filter', 'RamFilter'),))] == 7
    assert samples[('scheduler_rpc_errors_total', (
        ('exception', 'NoValidHost'),
        ('method', 'select_destinations')))] == 1
    assert samples[('scheduler_phase_duration_seconds_bucket',
                    (('le', '0.0025'), ('phase', 'filter')))] == 0
    assert samples[('scheduler_phase_duration_seconds_bucket',
                    (('le', '0.005'), ('phase', 'filter')))] == 1
    assert samples[('scheduler_hosts', (('state', 'down'),))] == 1
    assert samples[('scheduler_decisions_total', ())] == 1
    assert any(name == 'scheduler_build_info' for name, _ in samples)
    assert any(name == 'process_start_time_seconds' for name, _ in samples)


def test_health_of_a_worker(conf, db):
    cache = types.SimpleNamespace(position=None, table=None)
    worker = types.SimpleNamespace(db=db, host_cache=cache)
    health = health_mod.Health(conf, worker, clock=lambda: 1000.0)
    assert health.problems() == ['host table not loaded']
    cache.position = 1
    cache.table = types.SimpleNamespace(size=0, reported_at=[])
    assert health.problems() == ['no host has reported']
    cache.table = types.SimpleNamespace(
        size=2, reported_at=numpy.array([100.0, 990.0]))
    assert health.problems() == []
    assert health.hosts() == (2, 1, 1)
    health._clock = lambda: 990.0 + 61 + conf.scheduler.service_down_time
    assert health.problems() == ['no report for %d s' % (
        61 + conf.scheduler.service_down_time)]
    conf.set_override('connection', 'sqlite:////no/such/dir/x.sqlite',
                      'database')
    worker.db = db_api.Database(conf, max_retries=0)
    broken = health_mod.Health(conf, worker)
    assert broken.problems()[0].startswith('database unreachable: ')
