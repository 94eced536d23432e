"""Every operator command's error is one line on stderr with a non-zero
status, never a traceback (issue 23.4): a missing configuration file, a
database that cannot be reached, a schema not synced; and
``scheduler-status`` refuses what ``scheduler-server`` would refuse."""

import json

import pytest

from scheduler.cmd import manage
from scheduler.cmd import status

# nothing listens on port 1: refused at once, no timeout to wait for
DOWN = 'postgresql+psycopg2://scheduler:secret@127.0.0.1:1/scheduler'


def _one_line(err, prog):
    assert 'Traceback' not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(prog + ': ')


@pytest.mark.parametrize('main, argv, prog', [
    (manage.main, ['db', 'version'], 'scheduler-manage'),
    (manage.main, ['host', 'list'], 'scheduler-manage'),
    (status.main, ['upgrade', 'check'], 'scheduler-status'),
])
def test_a_missing_config_file_is_one_line(main, argv, prog, tmp_path,
                                           capsys):
    missing = str(tmp_path / 'missing.conf')
    assert main(['--config-file', missing] + argv) == 2
    out, err = capsys.readouterr()
    _one_line(err, prog)
    assert missing in err and out == ''


def _conf_file(tmp_path, text):
    path = tmp_path / 'scheduler.conf'
    path.write_text(text)
    return str(path)


def test_upgrade_check_with_the_database_down_is_a_failure(tmp_path,
                                                            capsys):
    path = _conf_file(tmp_path, '[database]\nconnection = %s\n' % DOWN)
    for argv in (['upgrade', 'check'], ['upgrade', 'check', '--json']):
        assert status.main(['--config-file', path] + argv) == 2
        out, err = capsys.readouterr()
        _one_line(err, 'scheduler-status')
        assert 'cannot use the database' in err and 'secret' not in err
        assert out == ''


def test_manage_with_the_database_down_is_one_line(tmp_path, capsys):
    path = _conf_file(tmp_path, '[database]\nconnection = %s\n' % DOWN)
    assert manage.main(['--config-file', path, 'db', 'version']) == 2
    _one_line(capsys.readouterr().err, 'scheduler-manage')


def test_a_schema_not_synced_is_the_answer_alone(tmp_path, capsys):
    path = _conf_file(tmp_path, '[database]\nconnection = sqlite:///%s\n'
                      % (tmp_path / 'empty.sqlite'))
    (tmp_path / 'empty.sqlite').write_bytes(b'')
    code = status.main(['--config-file', path, 'upgrade', 'check',
                        '--json'])
    out, err = capsys.readouterr()
    checks = {c['check']: c for c in json.loads(out)['checks']}
    assert code == 2
    assert 'db sync' in checks['Database schema']['details']
    assert checks['Worker releases']['result'] == 1
    assert err == ''


@pytest.mark.parametrize('settings, says', [
    ('[DEFAULT]\ntransport_url = rabit://guest:guest@127.0.0.1/\n',
     "unknown transport 'rabit'"),
    ('[DEFAULT]\nworkers = lots\n', '[DEFAULT] workers'),
    ('[filter_scheduler]\nenabled_filters = ComputeFilter,NoSuchFilter\n',
     'unknown filter NoSuchFilter'),
])
def test_status_fails_what_the_server_would_refuse(settings, says,
                                                   tmp_path, capsys):
    path = _conf_file(tmp_path, settings)
    code = status.main(['--config-file', path, 'upgrade', 'check',
                        '--json'])
    out, err = capsys.readouterr()
    configuration = json.loads(out)['checks'][0]
    assert code == 2 and configuration['check'] == 'Configuration'
    assert configuration['result'] == 2
    assert says in configuration['details']
    assert 'Traceback' not in err


def test_a_usable_configuration_passes(tmp_path, capsys):
    path = _conf_file(tmp_path, '[DEFAULT]\nworkers = 3\n')
    status.main(['--config-file', path, 'upgrade', 'check', '--json'])
    configuration = json.loads(capsys.readouterr().out)['checks'][0]
    assert (configuration['check'], configuration['result']) == (
        'Configuration', 0)


@pytest.mark.parametrize('argv', [
    ['--format', 'json', 'db', 'version'],
    ['db', 'version', '--format', 'json'],
])
def test_format_json_before_or_after_the_command(argv, tmp_path, capsys):
    path = _conf_file(tmp_path, '[database]\nconnection = sqlite:///%s\n'
                      % (tmp_path / 'm.sqlite'))
    assert manage.main(['--config-file', path] + argv) == 0
    assert json.loads(capsys.readouterr().out)['version'] is None


def test_format_after_the_command_wins(tmp_path, capsys):
    path = _conf_file(tmp_path, '[database]\nconnection = sqlite:///%s\n'
                      % (tmp_path / 'm.sqlite'))
    assert manage.main(['--config-file', path, '--format', 'json', 'db',
                        'version', '--format', 'table']) == 0
    assert capsys.readouterr().out.strip() == 'not initialized'



@pytest.mark.parametrize('main, argv, prog', [
    (status.main, ['upgrade', 'check'], 'scheduler-status'),
    (manage.main, ['service', 'list'], 'scheduler-manage'),
])
def test_a_url_without_an_installed_driver_names_one(main, argv, prog,
                                                     tmp_path, capsys):
    # postgresql:// is psycopg (3) to SQLAlchemy 2.1, not installed here
    # (tests/functional/test_operator_day.py runs the scripts themselves)
    path = _conf_file(tmp_path, '[database]\nconnection = '
                      'postgresql://nobody@127.0.0.1:1/x\n')
    assert main(['--config-file', path] + argv) == 2
    out, err = capsys.readouterr()
    _one_line(err, prog)
    assert 'postgresql+psycopg2://' in err and out == ''
