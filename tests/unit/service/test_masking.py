"""Passwords never reach a log line or a printed message."""

import pytest

from scheduler.service import masking


@pytest.mark.parametrize('text, masked', [
    ('rabbit://u1:pw1@h1:5672,u2:pw2@h2:5672/vh',
     'rabbit://u1:***@h1:5672,u2:***@h2:5672/vh'),
    ('rabbit://h1:5672,tracker:pw@h2:5672/', 'rabbit://h1:5672,tracker:***@h2:5672/'),
    ('postgresql+psycopg2://sched:p,w@db/sched',
     'postgresql+psycopg2://sched:***@db/sched'),
    ('mysql+pymysql://root:p@ss@db:3306/test', 'mysql+pymysql://root:***@db:3306/test'),
    ('cannot reach amqp://guest:guest@[::1]:5672// (refused)',
     'cannot reach amqp://guest:***@[::1]:5672// (refused)'),
    ('password=s3 "token": "t0k"', 'password=*** "token": "***"'),
    ('mysql+pymysql://root@db/test', 'mysql+pymysql://root@db/test'),
    ('kombu+memory:////', 'kombu+memory:////'),
    ('sqlite:////tmp/scheduler.db', 'sqlite:////tmp/scheduler.db'),
    # percent-encoded, and as kombu gets it from the rabbit driver (a bare
    # "/"): no piece of the password is left
    ('rabbit://u:p%40ss%3Aw%2Frd%231@127.0.0.1:5672/',
     'rabbit://u:***@127.0.0.1:5672/'),
    ('amqp://u:p%40ss%3Aw/rd%231@127.0.0.1:5672/ refused',
     'amqp://u:***@127.0.0.1:5672/ refused'),
])
def test_mask(text, masked):
    assert masking.mask(text) == masked
    assert masking.mask(text) == masked


def test_mask_dict_masks_urls_and_password_keys():
    values = {'DEFAULT': {'transport_url': 'rabbit://a:pw1@h1,b:pw2@h2/'},
              'database': {'connection': 'mysql://a:pw3@db/x',
                           'password': 'pw4'},
              'hosts': ['amqp://c:pw5@h3']}
    masked = masking.mask_dict(values)
    assert 'pw' not in repr(masked)
    assert masked['DEFAULT']['transport_url'] == 'rabbit://a:***@h1,b:***@h2/'
    assert values['database']['password'] == 'pw4'   # a copy is masked


def test_scheduler_manage_prints_the_database_url_masked(tmp_path, capsys):
    from scheduler.cmd import manage
    config = tmp_path / 'scheduler.conf'
    config.write_text('[database]\nconnection = postgresql+psycopg2://'
                      'sched:Db-S3cret@127.0.0.1:1/sched\n')
    assert manage.main(['--config-file', str(config), 'db', 'version']) == 2
    err = capsys.readouterr().err
    assert 'postgresql+psycopg2://sched:***@127.0.0.1:1/sched' in err
    assert 'Db-S3cret' not in err
