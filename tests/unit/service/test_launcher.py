"""scheduler-server before it forks: every bad value is one line on
stderr and exit status 2; a worker that dies young is restarted later and
later."""

import pytest

from scheduler import conf as sched_conf
from scheduler.service import launcher as launcher_mod
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
])
def test_bad_configuration_is_one_line_and_exit_2(tmp_path, capsys, text,
                                                   words):
    path = tmp_path / 'scheduler.conf'
    path.write_text(text)
    assert server.main(['--config-file', str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith('scheduler-server: ')
    assert words in err and 'secret' not in err


def test_a_worker_dying_young_is_restarted_with_backoff(conf):
    slept = []
    # not time.sleep itself: other tests' threads may still sleep
    launcher = launcher_mod.Launcher(conf, sleep=slept.append)
    for _ in range(8):
        launcher._on_new_worker('svc', 0, None)
        launcher._on_dead_worker('svc', 0, 1)
    assert slept == [1, 2, 4, 8, 16, 32, 60, 60]
    # a graceful exit (SIGHUP restart) does not count and does not wait
    launcher._on_dead_worker('svc', 0, 0)
    assert len(slept) == 8
    # a worker that lived long enough resets the back-off
    launcher.started['svc', 0] -= launcher_mod._HEALTHY_AFTER
    launcher._on_dead_worker('svc', 0, 1)
    launcher._on_new_worker('svc', 0, None)
    launcher._on_dead_worker('svc', 0, 1)
    assert slept[-1] == 1


def test_sighup_keeps_the_configuration_when_the_files_are_bad(tmp_path,
                                                                 caplog):
    path = tmp_path / 'scheduler.conf'
    path.write_text('[DEFAULT]\nworkers = 3\n')
    conf = sched_conf.new_config()
    conf(['--config-file', str(path)], project='scheduler',
         default_config_files=[], default_config_dirs=[])
    launcher = launcher_mod.Launcher(conf)
    path.write_text('[DEFAULT]\nworkers = two\n')
    launcher._on_reload()
    assert conf.workers == 3
    assert 'Not reloading: Invalid configuration: invalid value for ' \
        '[DEFAULT] workers' in caplog.text
    path.write_text('[DEFAULT]\nworkers = 4\n')
    launcher._on_reload()
    assert conf.workers == 4


@pytest.mark.parametrize('reporters, services', [
    (0, [('Worker', 2, 'all')]),
    (1, [('Worker', 2, 'decisions'), ('ReportWorker', 1, 'reports')]),
])
def test_report_workers_get_a_service_of_their_own(conf, monkeypatch,
                                                   reporters, services):
    added = []

    class _Manager:
        def __init__(self, **kwargs):
            pass

        def add(self, cls, workers, args):
            serves = cls(0, *args).serves
            added.append((cls.__name__, workers, serves))

        def register_hooks(self, **hooks):
            pass

        def run(self):
            pass

    monkeypatch.setattr(launcher_mod.cotyledon, 'ServiceManager', _Manager)
    monkeypatch.setattr(launcher_mod, 'enable_reports', lambda: None)
    conf.set_override('workers', 2)
    conf.set_override('report_workers', reporters)
    assert launcher_mod.Launcher(conf).run() == 0
    assert added == services


def test_a_report_worker_numbers_itself_after_the_decision_workers(conf):
    conf.set_override('workers', 3)
    assert launcher_mod.ReportWorker(1, conf).index == 4


def test_worker_rpc_servers_by_what_they_serve(conf, transport):
    from scheduler.rpc import messaging
    topic = conf.scheduler.topic
    report_topic = sched_conf.scheduler.report_topic(conf)
    for serves, topics in ((messaging.SERVES_ALL, [topic, report_topic]),
                           (messaging.SERVES_DECISIONS, [topic]),
                           (messaging.SERVES_REPORTS, [report_topic])):
        servers = messaging.get_server(conf, transport, [object()],
                                       serves=serves)
        assert [s._target.topic for s in servers.servers] == topics
