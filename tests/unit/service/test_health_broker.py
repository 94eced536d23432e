"""/healthcheck names a broker the worker cannot reach (issue 23.8), with
start-up's own broker check, asked at most once per
``BROKER_CHECK_INTERVAL`` however often the probes come."""

import types

from scheduler import exception
from scheduler.driver import decision_recorder
from scheduler.service import health as health_mod
from tests.unit.service.test_metrics_health import _get
from tests.unit.service.test_metrics_health import _serve

# nothing listens on port 1: refused at once
REFUSED = 'rabbit://guest:s3cret@127.0.0.1:1/'


class Clock:
    now = 100.0

    def __call__(self):
        return self.now


def test_the_answer_is_kept_for_the_interval():
    asked = []

    def probe():
        asked.append(clock.now)
        if len(asked) > 1:
            raise exception.ServiceUnavailable(
                service='message broker', url='rabbit://h/', reason='gone')
    clock = Clock()
    check = health_mod.BrokerCheck(None, clock=clock, probe=probe)
    assert [check.problem() for _ in range(50)] == [None] * 50
    clock.now += health_mod.BROKER_CHECK_INTERVAL - 1
    assert check.problem() is None and len(asked) == 1
    clock.now += 1
    assert check.problem() == ('message broker unreachable at '
                               'rabbit://h/: gone')
    assert check.problem().endswith('gone') and len(asked) == 2


def test_an_unexpected_probe_error_is_a_line_not_a_500():
    def probe():
        raise RuntimeError('odd\nsecond line')
    check = health_mod.BrokerCheck(None, probe=probe)
    assert check.problem() == 'message broker check failed: odd'


def test_the_in_memory_transport_has_no_broker_to_ask(conf):
    assert health_mod.BrokerCheck(conf).problem() is None


def test_a_refused_broker_answers_503_with_its_url_masked(conf, db):
    conf.set_override('transport_url', REFUSED)
    # start-up would retry; a probe asks once (no 5 x 2 s of sleep)
    conf.set_override('startup_retries', 5)
    worker = types.SimpleNamespace(db=db)
    port, server = _serve(conf, decision_recorder.DecisionRecorder(),
                          health_mod.Health(conf, worker))
    try:
        status, body = _get(port, '/healthcheck')
    finally:
        server.shutdown()
        server.server_close()
    assert status == 503, body
    assert body.startswith('message broker unreachable at '
                           'rabbit://guest:***@127.0.0.1:1/: ')
    assert 's3cret' not in body and len(body.splitlines()) == 1
