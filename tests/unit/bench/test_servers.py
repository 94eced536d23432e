"""The bench's own accounting: claim conflicts read from the workers'
metrics endpoints (the product's Prometheus text, not their logs), and
reports absorbed counted per run."""

from scheduler.driver import decision_recorder
from scheduler.service import metrics_endpoint
from scheduler_bench import servers
from scheduler_bench import settings


def test_claim_conflicts_are_summed_over_the_workers_endpoints(conf,
                                                                tmp_path):
    values = settings.base_values('sqlite://', workers=2)
    server = servers.SchedulerServer(values, str(tmp_path))
    conf.set_override('port', server.metrics_port, 'prometheus')
    endpoints = []
    try:
        for worker, conflicts in enumerate((3, 4)):
            recorder = decision_recorder.DecisionRecorder()
            recorder.decision({'claim': 0.001}, 1, conflicts=conflicts)
            endpoints.append(metrics_endpoint.serve(conf, recorder, worker))
        assert server.claim_conflicts() == 7
    finally:
        for endpoint in endpoints:
            endpoint.shutdown()
            endpoint.server_close()


def test_a_silent_worker_endpoint_is_an_error(tmp_path):
    values = settings.base_values('sqlite://', workers=1)
    server = servers.SchedulerServer(values, str(tmp_path))
    try:
        server.claim_conflicts()
    except servers.ServerError as exc:
        assert 'no metrics from worker 0' in str(exc)
    else:
        raise AssertionError('no error without an endpoint')


def test_free_ports_are_free_and_consecutive():
    import socket
    first = servers.free_ports(3)
    # below the kernel's ephemeral range (free_ports' contract); where
    # that range starts low, the ports come from below half of its start
    high = servers.ephemeral_start() - 3
    assert min(servers.PORTS_FROM, high // 2) <= first < high
    for port in range(first, first + 3):
        with socket.socket() as sock:
            sock.bind(('127.0.0.1', port))


def test_absorbed_counts_only_beats_above_an_earlier_runs(db):
    from scheduler_bench import churn
    from tests.unit import fakes
    fakes.report(db, 'a', stats={'bench_beat': '1'})
    fakes.report(db, 'b', stats={'bench_beat': '1003'})
    fakes.report(db, 'c')
    assert churn._absorbed(db) == 1004
    # a second run's beats start at 1001: 'b' absorbed 3 of them
    assert churn._absorbed(db, 1000) == 3
