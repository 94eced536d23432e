"""Start-up checks: an error no retry can change stops start-up at once,
named as such; any database error is one line, without SQLAlchemy's
background link; the reload and scheduler-status use the same check."""

import pytest
import sqlalchemy.exc

from scheduler import exception
from scheduler.service import startup_checks


def _operational(text):
    return sqlalchemy.exc.OperationalError('SELECT 1', {}, Exception(text))


def test_a_database_error_is_one_line_of_its_driver():
    exc = _operational('connection to server at "db" failed: FATAL:  '
                       'password authentication failed for user "s"\n')
    assert 'Background on this error' in str(exc)
    assert startup_checks.describe_error(exc) == (
        'connection to server at "db" failed: FATAL:  password '
        'authentication failed for user "s"')


class _Probe:
    """What db_api.Database does at start-up, failing with ``error``."""

    def __init__(self, error):
        self.error, self.calls = error, 0

    def __call__(self, conf, max_retries=None):
        self.calls += 1
        raise self.error


@pytest.mark.parametrize('text, permanent', [
    ('FATAL:  database "nope" does not exist', True),
    ('FATAL:  role "nope" does not exist', True),
    ('(1045, "Access denied for user \'s\'@\'h\' (using password: YES)")',
     True),
    ('(1049, "Unknown database \'nope\'")', True),
    ('Connection refused\n\tIs the server running on that host', False),
])
def test_permanent_database_errors_are_not_retried(conf, monkeypatch, text,
                                                   permanent):
    conf.set_override('startup_retries', 3)
    conf.set_override('startup_retry_interval', 0)
    conf.set_override('connection', 'postgresql+psycopg2://s@h/nope',
                      'database')
    probe = _Probe(_operational(text))
    monkeypatch.setattr(startup_checks.db_api, 'Database', probe)
    with pytest.raises(exception.SchedulerException) as caught:
        startup_checks.check_database(conf)
    message = str(caught.value)
    assert '\n' not in message and 'Background' not in message
    if permanent:
        assert probe.calls == 1
        assert 'a permanent error, not retried' in message
    else:
        assert probe.calls == 4
        assert 'unreachable' in message and 'after 4 attempts' in message


def test_a_driver_not_installed_is_permanent_and_names_one(
        conf, monkeypatch):
    conf.set_override('startup_retries', 3)
    conf.set_override('connection', 'postgresql://s@h/x', 'database')
    probe = _Probe(ModuleNotFoundError("No module named 'psycopg'"))
    monkeypatch.setattr(startup_checks.db_api, 'Database', probe)
    with pytest.raises(exception.SchedulerException) as caught:
        startup_checks.check_database(conf)
    assert probe.calls == 1
    assert 'postgresql+psycopg2://' in str(caught.value)


def test_no_sqlite_file_is_created_by_the_check(conf, tmp_path):
    path = tmp_path / ('x' * 100) / 'scheduler.sqlite'
    conf.set_override('connection', 'sqlite:///%s' % path, 'database')
    with pytest.raises(exception.SchedulerException) as caught:
        startup_checks.check_database(conf)
    assert not path.exists()
    # the whole advice, not cut after 200 characters as a caller's text
    message = str(caught.value)
    assert message.startswith('the database file %s does not exist'
                              % path)
    assert message.endswith('"scheduler-manage db sync" to create it')


def test_the_configuration_check_names_an_unknown_plugin(conf):
    conf.set_override('transport_url', 'rabbit://')
    assert startup_checks.configuration_problem(conf) is None
    conf.set_override('enabled_filters', ['ComputeFilter', 'RamFilter'],
                      'filter_scheduler')
    problem = startup_checks.configuration_problem(conf)
    assert 'unknown filter RamFilter' in problem and '\n' not in problem
