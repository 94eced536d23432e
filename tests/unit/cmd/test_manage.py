"""scheduler-manage against a SQLite file named in a config file: what it
prints (table or JSON) and its exit status (0 done, 1 not found, 2 usage
or database error)."""

import json

import pytest

from scheduler.db import claims
from scheduler import objects
from scheduler.cmd import manage
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.db import providers as db_providers

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
C2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'


@pytest.fixture
def config_file(tmp_path):
    path = tmp_path / 'scheduler.conf'
    path.write_text('[database]\nconnection = sqlite:///%s\n' %
                    (tmp_path / 'manage.sqlite'))
    return str(path)


@pytest.fixture
def run(config_file, capsys):
    """run('host', 'list') -> (exit status, stdout, stderr)."""
    def run(*argv, fmt=None):
        args = ['--config-file', config_file]
        if fmt:
            args += ['--format', fmt]
        status = manage.main(args + list(argv))
        out, err = capsys.readouterr()
        return status, out, err
    return run


@pytest.fixture
def cloud(conf, tmp_path, run):
    """A synced database with two hosts and claims of two consumers."""
    assert run('db', 'sync')[0] == 0
    database = db_api.Database(conf,
                               'sqlite:///%s' % (tmp_path / 'manage.sqlite'))
    h1 = fakes.report(database, 'h1', availability_zone='az1',
                      vcpus_used=1)
    h2 = fakes.report(database, 'h2', node='h2-node', disabled=True)
    claims.claim_resources(database, [
        claims.Claim(C1, h1, {'VCPU': 2, 'MEMORY_MB': 1024}),
        claims.Claim(C2, h2, {'VCPU': 1})])
    yield database
    database.dispose()


def test_db_version_before_and_after_sync(run):
    assert run('db', 'version') == (0, 'not initialized\n', '')
    status, out, _ = run('db', 'sync')
    head = migration.head_revision()
    assert (status, out) == (0, 'Database at revision %s\n' % head)
    assert run('db', 'version') == (0, head + '\n', '')
    status, out, _ = run('db', 'version', fmt='json')
    assert json.loads(out) == {'version': head, 'head': head}


def test_db_sync_twice_is_harmless(run):
    assert run('db', 'sync')[0] == 0
    assert run('db', 'sync')[0] == 0


def test_host_list_table(run, cloud):
    status, out, _ = run('host', 'list')
    assert status == 0
    lines = out.splitlines()
    header = [c.strip() for c in lines[1].strip('|').split('|')]
    assert header == ['host', 'node', 'kind', 'zone', 'disabled', 'VCPU',
                      'MEMORY_MB', 'DISK_GB', 'other', 'reported']
    rows = [[c.strip() for c in line.strip('|').split('|')]
            for line in lines[3:-1]]
    assert [r[:9] for r in rows] == [
        ['h1', 'h1', 'compute', 'az1', 'no', '2/32', '1024/16384', '0/500',
         '-'],
        ['h2', 'h2-node', 'compute', '-', 'yes', '1/32', '0/16384', '0/500',
         '-']]


def test_host_list_shows_kind_and_other_classes(run, cloud):
    db_providers.record_compute_node(cloud, objects.ComputeNode.from_stats(
        'cinder1', 'cinder1', {
            'kind': 'storage',
            'inventories': {'DISK_GB': {'total': 100},
                            'CUSTOM_IOPS': {'total': 5000}},
            'used': {'CUSTOM_IOPS': 1000}}), fakes.RATIO_DEFAULTS)
    status, out, _ = run('host', 'list')
    assert status == 0
    [row] = [[c.strip() for c in line.strip('|').split('|')]
             for line in out.splitlines() if 'cinder1' in line]
    assert row[:9] == ['cinder1', 'cinder1', 'storage', '-', 'no', '-', '-',
                       '0/100', 'CUSTOM_IOPS 1000/5000']


def test_host_list_json(run, cloud):
    status, out, _ = run('host', 'list', fmt='json')
    assert status == 0
    hosts = json.loads(out)
    assert [(h['host'], h['nodename']) for h in hosts] == [
        ('h1', 'h1'), ('h2', 'h2-node')]
    assert hosts[0]['inventories']['VCPU']['claimed'] == 2
    assert hosts[0]['inventories']['VCPU']['reported_used'] == 1


def test_host_show_by_host_or_node(run, cloud):
    status, out, _ = run('host', 'show', 'h2-node')
    assert status == 0
    assert 'h2-node' in out and C2 in out and C1 not in out
    status, out, _ = run('host', 'show', 'h1', fmt='json')
    host = json.loads(out)
    assert status == 0
    assert host['host'] == 'h1' and host['availability_zone'] == 'az1'
    assert sorted((a['resource_class'], a['amount'])
                  for a in host['allocations']) == [('MEMORY_MB', 1024),
                                                    ('VCPU', 2)]


def test_host_show_unknown_host_exits_1(run, cloud):
    status, out, err = run('host', 'show', 'nope')
    assert (status, out) == (1, '')
    assert 'No host named nope' in err


def test_allocation_list_all_and_by_host(run, cloud):
    status, out, _ = run('allocation', 'list')
    assert status == 0 and C1 in out and C2 in out
    status, out, _ = run('allocation', 'list', '--host', 'h2')
    assert status == 0 and C2 in out and C1 not in out
    status, out, _ = run('allocation', 'list', fmt='json')
    rows = json.loads(out)
    assert sorted((a['consumer_uuid'], a['host'], a['resource_class'])
                  for a in rows) == [(C1, 'h1', 'MEMORY_MB'),
                                     (C1, 'h1', 'VCPU'), (C2, 'h2', 'VCPU')]


def test_allocation_delete_then_not_found(run, cloud):
    status, out, _ = run('allocation', 'delete', C1)
    assert status == 0
    assert out == 'Released 2 allocation rows of %s\n' % C1
    assert claims.list_allocations(cloud, consumer_uuid=C1) == []
    status, out, err = run('allocation', 'delete', C1)
    assert (status, out) == (1, '')
    assert 'No allocations for %s' % C1 in err


def test_allocation_delete_json(run, cloud):
    status, out, _ = run('allocation', 'delete', C2, fmt='json')
    assert status == 0
    assert json.loads(out) == {'consumer': C2, 'released': 1}


def test_commands_before_sync_exit_2_with_a_hint(run):
    status, out, err = run('host', 'list')
    assert (status, out) == (2, '')
    assert 'db sync' in err
    assert 'Traceback' not in err


def test_unreachable_database_exits_2(tmp_path, capsys):
    path = tmp_path / 'bad.conf'
    path.write_text('[database]\nconnection = sqlite:///%s\n' %
                    (tmp_path / 'no-such-dir' / 'db.sqlite'))
    assert manage.main(['--config-file', str(path), 'db', 'version']) == 2
    err = capsys.readouterr().err
    assert err.startswith('scheduler-manage: ')
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize('argv', [
    [], ['db'], ['db', 'drop'], ['host', 'show'], ['--format', 'xml', 'db',
                                                    'version'],
])
def test_usage_errors_exit_2(run, argv):
    with pytest.raises(SystemExit) as info:
        run(*argv)
    assert info.value.code == 2
