"""``scheduler-server`` refusing to start (issue 23.5): the reason is one
line on stderr and once in the log, whole (not cut like a caller's
text), and nothing is created in its directory."""

import logging
import os

from scheduler.cmd import server


def test_no_database_file_is_one_whole_line_on_stderr_and_in_the_log(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'scheduler.conf').write_text(
        '[DEFAULT]\ntransport_url = rabbit://guest:guest@127.0.0.1:1/\n')
    log = tmp_path / 'server.log'
    try:
        assert server.main(['--config-file', 'scheduler.conf',
                            '--log-file', str(log)]) == 2
    finally:
        root = logging.getLogger()
        for handler in list(root.handlers):
            if getattr(handler, 'baseFilename', None) == str(log):
                root.removeHandler(handler)
                handler.close()
    [line] = capsys.readouterr().err.splitlines()
    reason = line[len('scheduler-server: '):]
    assert line.startswith('scheduler-server: the database file ')
    assert reason.endswith('"scheduler-manage db sync" to create it')
    [logged] = [entry for entry in log.read_text().splitlines()
                if ' ERROR ' in entry]
    assert logged.endswith(reason) and logged.count('does not exist') == 1
    assert sorted(os.listdir(tmp_path)) == ['scheduler.conf', 'server.log']
