"""``scheduler-server`` refusing to start (issue 23.5): the reason is one
line on stderr and once in the log, whole (not cut like a caller's
text), and nothing is created in its directory; an outage exits 75, a
mistake 2 (which the systemd unit does not restart)."""

import logging
import os
import pathlib

from scheduler.cmd import server

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _main(tmp_path, config):
    (tmp_path / 'scheduler.conf').write_text(config)
    log = tmp_path / 'server.log'
    try:
        return server.main(['--config-file', 'scheduler.conf',
                            '--log-file', str(log)])
    finally:
        root = logging.getLogger()
        for handler in list(root.handlers):
            if getattr(handler, 'baseFilename', None) == str(log):
                root.removeHandler(handler)
                handler.close()


def test_no_database_file_is_one_whole_line_on_stderr_and_in_the_log(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _main(tmp_path, '[DEFAULT]\ntransport_url = '
                 'rabbit://guest:guest@127.0.0.1:1/\n') == 2
    [line] = capsys.readouterr().err.splitlines()
    reason = line[len('scheduler-server: '):]
    assert line.startswith('scheduler-server: the database file ')
    assert reason.endswith('"scheduler-manage db sync" to create it')
    [logged] = [entry for entry in (tmp_path / 'server.log').read_text()
                .splitlines() if ' ERROR ' in entry]
    assert logged.endswith(reason) and logged.count('does not exist') == 1
    assert sorted(os.listdir(tmp_path)) == ['scheduler.conf', 'server.log']


def test_an_outage_exits_75_and_a_mistake_2(tmp_path, capsys, monkeypatch):
    """An outage is worth a restart later (EX_TEMPFAIL), a mistake is not
    (the systemd unit's RestartPreventExitStatus)."""
    monkeypatch.chdir(tmp_path)
    down = ('[DEFAULT]\nstartup_retries = 0\n[database]\nconnection = '
            'postgresql+psycopg2://nobody@127.0.0.1:1/x\n')
    assert _main(tmp_path, down) == server.OUTAGE == 75
    assert 'database unreachable' in capsys.readouterr().err
    assert _main(tmp_path, down + '[scheduler]\nmax_attempts = lots\n') \
        == server.MISCONFIGURED == 2
    assert 'max_attempts' in capsys.readouterr().err
    unit = (ROOT / 'etc' / 'systemd' / 'scheduler-server.service')
    assert 'RestartPreventExitStatus=%d\n' % server.MISCONFIGURED in (
        unit.read_text())
