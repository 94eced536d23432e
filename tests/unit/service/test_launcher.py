"""scheduler-server before it forks: every bad value is one line on
stderr and exit status 2; a worker that dies young is restarted later and
later, by the parent; the Guru Meditation Report shows our release and
options. The reload's checks are in test_reload.py."""

import pytest

from scheduler import conf as sched_conf
from scheduler.service import launcher as launcher_mod
from scheduler.service import startup_checks
from scheduler.service import supervisor
from scheduler.cmd import server


@pytest.mark.parametrize('text, words', [
    ('[DEFAULT]\nworkers = two\n',
     "invalid value for [DEFAULT] workers: invalid literal for int()"),
    ('[DEFAULT]\ngraceful_shutdown_timeout = -5\n',
     'invalid value for [DEFAULT] graceful_shutdown_timeout: Should be '
     'greater than or equal to 0'),
    ('[scheduler]\nrefresh_interval = soon\n',
     'invalid value for [scheduler] refresh_interval'),
    ('[DEFAULT]\ntransport_url = rabit://u:secret@host:5672/\n',
     "transport_url rabit://u:***@host:5672/: unknown transport 'rabit'"),
    ('[DEFAULT\n', 'Invalid section'),
    ('[DEFAULT]\ntransport_url = rabbit://u:p@ss@h:port/\n',
     'invalid transport_url'),
])
def test_bad_configuration_is_one_line_and_exit_2(tmp_path, capsys, text,
                                                   words):
    path = tmp_path / 'scheduler.conf'
    path.write_text(text)
    assert server.main(['--config-file', str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith('scheduler-server: ')
    assert words in err and 'secret' not in err


class _Clock:
    now = 1000.0

    def __call__(self):
        return self.now


def test_a_worker_dying_young_is_restarted_with_backoff():
    clock = _Clock()
    backoff = supervisor.Backoff(clock)
    delays = []
    for _ in range(8):
        backoff.started('w0')
        clock.now += 2
        delays.append(backoff.died('w0')[0])
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60]
    assert backoff.pop_delay('w0') == 60 and backoff.pop_delay('w0') == 0
    # whatever its exit status: the parent only sees how long it lived;
    # a worker the parent stopped itself (a reload) restarts at once
    backoff.started('w0')
    assert backoff.died('w0', stopped_by_parent=True) == (0, 0)
    # and so does one that lived long enough, which resets the back-off
    backoff.started('w0')
    clock.now += supervisor.HEALTHY_AFTER
    assert backoff.died('w0')[0] == 0
    backoff.started('w0')
    assert backoff.died('w0')[0] == 1
    # each worker has its own
    backoff.started('w1')
    assert backoff.died('w1')[0] == 1


@pytest.mark.parametrize('reporters, services', [
    (0, [('Worker', 2, 'all', 0)]),
    (1, [('Worker', 2, 'decisions', 0), ('ReportWorker', 1, 'reports', 2)]),
])
def test_report_workers_get_a_service_of_their_own(conf, monkeypatch,
                                                   reporters, services):
    added = []

    class _Supervisor:
        def __init__(self, *args, **kwargs):
            pass

        def add_workers(self, cls, count, args, first_index):
            serves = cls(0, *args).serves
            added.append((cls.__name__, count, serves, first_index))

        def run(self):
            pass

    monkeypatch.setattr(launcher_mod.supervisor, 'Supervisor', _Supervisor)
    monkeypatch.setattr(launcher_mod, 'enable_reports', lambda conf: None)
    conf.set_override('workers', 2)
    conf.set_override('report_workers', reporters)
    assert launcher_mod.Launcher(conf).run() == 0
    assert added == services


def test_a_report_worker_numbers_itself_after_the_decision_workers(conf):
    conf.set_override('workers', 3)
    assert launcher_mod.ReportWorker(1, conf).index == 4


class _Endpoint:
    """An endpoint with nothing to serve (weakly referenced, unlike an
    ``object()``)."""


def test_worker_rpc_servers_by_what_they_serve(conf, transport):
    from scheduler.rpc import messaging
    topic = conf.scheduler.topic
    report_topic = sched_conf.scheduler.report_topic(conf)
    for serves, topics in ((messaging.SERVES_ALL, [topic, report_topic]),
                           (messaging.SERVES_DECISIONS, [topic]),
                           (messaging.SERVES_REPORTS, [report_topic])):
        servers = messaging.get_server(conf, transport, [_Endpoint()],
                                       serves=serves)
        assert [s.target.topic for s in servers.servers] == topics


def test_a_percent_encoded_password_reaches_the_broker_as_written(conf):
    from scheduler.rpc import messaging
    conf.set_override('transport_url',
                      'rabbit://u:p%40ss%3Aw%2Frd%231@127.0.0.1:5672/')
    startup_checks.check_config(conf)
    [url] = messaging.broker_urls(conf)
    # what kombu reads back is what the operator wrote
    from kombu.utils import url as kombu_url
    parts = kombu_url.url_to_parts(url)
    assert (parts.hostname, parts.port, parts.username, parts.password) == (
        '127.0.0.1', 5672, 'u', 'p@ss:w/rd#1')
    # oslo.messaging's client would send "p@ss:w/rd#1" with the "/" bare
    # (kombu: "Port could not be cast"): it is refused, saying why,
    # before any connection is tried, and nothing is patched
    with pytest.raises(messaging.UnusableTransportURL) as caught:
        messaging.get_transport(conf)
    assert 'password of host 1' in str(caught.value)
    assert 'p@ss' not in str(caught.value)


def test_the_guru_meditation_report_shows_our_release_and_options(conf):
    from scheduler import version
    conf.set_override('workers', 7)
    launcher_mod.enable_reports(conf)
    text = launcher_mod._Report(launcher_mod._Version()).run()
    assert version.release() in text and 'unknown' not in text.split(
        'Threads')[0]
    config = text.split('Configuration')[-1]
    assert 'workers = 7' in config and 'enabled_filters' in config
