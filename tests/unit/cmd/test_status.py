"""scheduler-status upgrade check: the results and exit codes an
operator sees (0 success, 1 warning, 2 failure)."""

import json

import pytest
from oslo_config import cfg

from scheduler.cmd import status
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.db import services as db_services


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / 'scheduler.conf'
    path.write_text('[database]\nconnection = sqlite:///%s\n'
                    % (tmp_path / 'status.sqlite'))
    return path


@pytest.fixture
def database(conf, tmp_path, config_file):
    database = db_api.Database(conf, 'sqlite:///%s'
                               % (tmp_path / 'status.sqlite'))
    migration.db_sync(database)
    yield database
    database.dispose()


def _check(config_file, capsys):
    code = status.main(['--config-file', str(config_file), 'upgrade',
                        'check', '--json'])
    checks = json.loads(capsys.readouterr().out)['checks']
    return code, {c['check']: (c['result'], c['details']) for c in checks}


def test_all_workers_on_one_release_is_a_success(database, config_file,
                                                 capsys, monkeypatch):
    db_services.register(database, 'h1', 0)
    db_services.register(database, 'h1', 1)
    code, checks = _check(config_file, capsys)
    assert code == 0
    assert checks['Database schema'][0] == 0
    assert checks['Worker releases'][0] == 0
    assert '2 live workers' in checks['Worker releases'][1]


def test_mixed_releases_are_a_warning(database, config_file, capsys,
                                      monkeypatch):
    db_services.register(database, 'h1', 0)
    monkeypatch.setattr(status.db_services.version, 'release',
                        lambda: '9.9.9')
    db_services.register(database, 'h2', 0)
    code, checks = _check(config_file, capsys)
    assert code == 1
    result, details = checks['Worker releases']
    assert result == 1 and '9.9.9' in details and '2 releases' in details


def test_pending_migrations_are_a_failure(database, config_file, capsys):
    with database.engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE alembic_version SET version_num = '0001'")
    code, checks = _check(config_file, capsys)
    assert code == 2
    result, details = checks['Database schema']
    assert result == 2
    assert 'Pending migrations' in details and 'db sync' in details


def test_no_database_is_a_failure_and_creates_no_file(config_file, capsys,
                                                      tmp_path):
    code, checks = _check(config_file, capsys)
    assert code == 2
    assert 'does not exist' in checks['Database schema'][1]
    assert not (tmp_path / 'status.sqlite').exists()


def test_deprecated_options_in_the_files_are_listed(tmp_path):
    path = tmp_path / 'old.conf'
    path.write_text('[scheduler]\nold_knob = 1\ngone = 2\n')
    conf = cfg.ConfigOpts()
    options = [
        ('scheduler', cfg.IntOpt('new_knob', deprecated_name='old_knob')),
        ('scheduler', cfg.IntOpt('gone', deprecated_for_removal=True,
                                 deprecated_reason='nothing reads it')),
        ('scheduler', cfg.IntOpt('fine')),
    ]
    for group, opt in options:
        conf.register_opt(opt, group)
    conf(['--config-file', str(path)], default_config_files=[])
    assert status.deprecated_options_set(conf, options) == [
        '[scheduler] gone is deprecated for removal: nothing reads it',
        '[scheduler] old_knob is now [scheduler] new_knob']


def test_version(capsys):
    assert status.main(['--version']) == 0
    assert capsys.readouterr().out.startswith('scheduler-status ')
