"""scheduler-manage service list, aggregate list/show, db purge,
--version, the db sync hint and no stray SQLite file: what an operator
sees."""

import datetime
import json
import os
import pathlib

import pytest
import sqlalchemy as sa

from scheduler import conf as sched_conf
from scheduler import objects
from scheduler.cmd import manage
from scheduler.conf import database as db_conf
from scheduler.db import aggregates as db_aggregates
from scheduler.db import api as db_api
from scheduler.db import instances as db_instances
from scheduler.db import migration
from scheduler.db import models
from scheduler.db import services as db_services

AGG1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
AGG2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
INST1 = '7a1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
INST2 = '7a1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
INST3 = '7a1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e53'
NOW = datetime.datetime(2026, 11, 23, 6, 0, 0)


@pytest.fixture
def database(conf, tmp_path):
    path = tmp_path / 'manage.sqlite'
    (tmp_path / 'scheduler.conf').write_text(
        '[database]\nconnection = sqlite:///%s\n' % path)
    database = db_api.Database(conf, 'sqlite:///%s' % path)
    migration.db_sync(database)
    yield database
    database.dispose()


@pytest.fixture
def run(tmp_path, capsys):
    def run(*argv):
        status = manage.main(['--config-file',
                              str(tmp_path / 'scheduler.conf'), *argv])
        out, err = capsys.readouterr()
        return status, out, err
    return run


def _rows(out):
    return [[c.strip() for c in line.strip('|').split('|')]
            for line in out.splitlines()[3:] if line.startswith('|')]


def test_service_list_shows_versions_and_who_is_down(database, run):
    now = db_services.now()
    db_services.register(database, 'sched1', 0, at=now)
    old = db_services.register(database, 'sched2', 1,
                               at=now - datetime.timedelta(hours=2))
    db_services.beat(database, old, at=now - datetime.timedelta(hours=1))
    status, out, _ = run('service', 'list')
    assert status == 0
    rows = _rows(out)
    assert [(r[0], r[5], r[6]) for r in rows] == [
        ('sched1', 'up', '-'), ('sched2', 'DOWN', '1:00:00')]
    assert rows[0][4] == '1.3'
    status, out, _ = run('--format', 'json', 'service', 'list')
    listed = json.loads(out)
    assert [s['up'] for s in listed] == [True, False]
    assert (listed[0]['object_versions']['RequestSpec']
            == objects.RequestSpec.VERSION)


def test_db_purge_deletes_only_long_gone_workers(database, run):
    now = db_services.now()
    db_services.register(database, 'live', 0, at=now)
    db_services.register(database, 'gone', 0,
                         at=now - datetime.timedelta(days=40))
    assert run('db', 'purge') == (
        0, 'Purged 1 service records of workers down for more than 30 '
        'days\nPurged 0 deleted aggregates and 0 forgotten instances '
        'deleted more than 30 days ago\n', '')
    hosts = [s['host'] for s in db_services.list_services(database, 60)]
    assert hosts == ['live']


def _tombstones(database, table):
    with database.reader() as session:
        return sorted(row.uuid for row in session.execute(
            sa.select(table.c.uuid).where(table.c.deleted == sa.true())))


def test_db_purge_deletes_only_old_tombstones(database, run):
    now = db_services.now()
    old, recent = now - datetime.timedelta(days=40), now
    db_aggregates.save_aggregates(database, [
        objects.Aggregate(uuid=uuid, name=uuid[-2:], hosts=['h1'],
                          metadata={}) for uuid in (AGG1, AGG2)],
        stamp=old - datetime.timedelta(seconds=1))
    db_aggregates.delete_aggregate(database, AGG1, stamp=old)
    db_aggregates.delete_aggregate(database, AGG2, stamp=recent)
    db_instances.save_instances(database, 'h1', [
        objects.InstanceInfo(uuid=INST1), objects.InstanceInfo(uuid=INST2),
        objects.InstanceInfo(uuid=INST3)],
        now=old - datetime.timedelta(seconds=1))
    db_instances.delete_instance(database, 'h1', INST1, stamp=old)
    db_instances.delete_instance(database, 'h1', INST2, stamp=recent)
    status, out, _ = run('--format', 'json', 'db', 'purge')
    assert status == 0
    assert json.loads(out) == {'service_records': 0, 'aggregates': 1,
                               'instances': 1}
    # recent tombstones stay, so a late update can't bring them back
    assert _tombstones(database, models.aggregates) == [AGG2]
    assert _tombstones(database, models.instances) == [INST2]
    live = [i['uuid'] for i in db_instances.instances_on(database, 'h1')]
    assert live == [INST3]


def test_aggregate_list_and_show(database, run):
    db_aggregates.save_aggregates(database, [
        objects.Aggregate(uuid=AGG1, name='gold', hosts=['h2', 'h1'],
                          metadata={'availability_zone': 'az-gold'}),
        objects.Aggregate(uuid=AGG2, name='old', hosts=[], metadata={})])
    db_aggregates.delete_aggregate(database, AGG2)
    status, out, _ = run('aggregate', 'list')
    assert status == 0
    assert _rows(out) == [[AGG1, 'gold', 'h1, h2',
                           'availability_zone=az-gold']]
    status, out, _ = run('aggregate', 'show', 'gold')
    assert ['metadata: availability_zone', 'az-gold'] in _rows(out)
    status, out, _ = run('--format', 'json', 'aggregate', 'show', AGG1)
    assert json.loads(out)['hosts'] == ['h1', 'h2']
    status, _, err = run('aggregate', 'show', 'old')
    assert (status, err) == (1, 'No aggregate named old\n')


def test_every_command_says_db_sync_on_an_old_schema(database, run):
    migration.db_sync(database, '0001')
    with database.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version "
                                   "SET version_num = '0001'")
    for argv in (['host', 'list'], ['service', 'list'],
                 ['aggregate', 'list'], ['db', 'purge']):
        status, out, err = run(*argv)
        assert (status, out) == (2, ''), argv
        assert 'schema is at revision 0001' in err
        assert 'run "scheduler-manage db sync" first' in err


def test_no_config_creates_no_sqlite_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv('HOME', str(tmp_path))
    assert manage.main(['host', 'list']) == 2
    err = capsys.readouterr().err
    assert 'scheduler.sqlite does not exist' in err
    assert '--config-file' in err
    assert os.listdir(tmp_path) == []


def test_version_option_prints_the_release(capsys):
    with pytest.raises(SystemExit) as info:
        manage.main(['--version'])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith('scheduler-manage ')
    assert out.split()[1][0].isdigit()


def test_the_sample_documents_the_database_defaults_in_use():
    # the sample used to say oslo.db's "connection = <None>" while every
    # command used ./scheduler.sqlite (issue 23.9)
    sample = (pathlib.Path(__file__).resolve().parents[3] / 'etc' /
              'scheduler' / 'scheduler.conf.sample').read_text()
    database = sample[sample.index('\n[database]\n'):]
    database = database[:database.index('\n[', 1)]
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    for name, value in sorted(db_conf.DEFAULTS.items()):
        assert '\n#%s = %s\n' % (name, value) in database, name
        assert conf.database[name] == value
