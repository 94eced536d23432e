"""An operator's bad day (issue 23), as the operator sees it: the console
scripts and the health endpoint of a real ``scheduler-server``.

* ``scheduler-status upgrade check`` against a database nothing listens
  for is one line on stderr and status 2 (a failure), whatever the URL's
  form: ``postgresql+psycopg2://`` (refused) or ``postgresql://`` (whose
  default driver is not installed, and which oslo.db used to warn about
  on a line of its own); on a schema not synced it says so, and nothing
  on stderr;
* a running server's workers answer ``GET /healthcheck`` with ``200 OK``
  (database and broker checked for real) and count as live in ``upgrade
  check``; once the server stopped cleanly, ``service list`` shows them
  down at once and ``upgrade check`` no longer counts them;
* ``--version`` names a release after every release tag, and ``reno
  report`` files each note under its release (or the one under way).
"""

import json
import pathlib
import re
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from packaging.version import Version

from scheduler import version
from scheduler_bench import servers
from tests.functional import db_state
from tests.functional import workload

BIN = pathlib.Path(sys.executable).parent
DOWN_URLS = ['postgresql+psycopg2://nobody:s3cret@127.0.0.1:1/x',
             'postgresql://nobody:s3cret@127.0.0.1:1/x']


def _run(script, config, *argv, cwd):
    return subprocess.run(
        [str(BIN / script), '--config-file', str(config)] + list(argv),
        capture_output=True, text=True, timeout=60, cwd=cwd)


@pytest.mark.parametrize('url', DOWN_URLS)
def test_upgrade_check_with_the_database_down(url, tmp_path):
    config = tmp_path / 'scheduler.conf'
    config.write_text('[database]\nconnection = %s\n' % url)
    result = _run('scheduler-status', config, 'upgrade', 'check',
                  cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ''
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(
        'scheduler-status: cannot use the database ')
    assert 's3cret' not in result.stderr
    assert list(tmp_path.iterdir()) == [config]



def test_upgrade_check_on_a_schema_not_synced_says_only_that(tmp_path):
    # oslo.db logged a 10-line DBAPIError traceback beside the answer;
    # in process, pytest's log capture would hide it: run the script
    (tmp_path / 'empty.sqlite').write_bytes(b'')
    config = tmp_path / 'scheduler.conf'
    config.write_text('[database]\nconnection = sqlite:///%s\n'
                      % (tmp_path / 'empty.sqlite'))
    result = _run('scheduler-status', config, 'upgrade', 'check',
                  '--json', cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, '')
    checks = {c['check']: c for c in json.loads(result.stdout)['checks']}
    assert 'db sync' in checks['Database schema']['details']

def _get(port, path):
    url = 'http://127.0.0.1:%d%s' % (port, path)
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _worker_releases(server):
    result = _run('scheduler-status', server.config_path, 'upgrade',
                  'check', '--json', cwd=server.workdir)
    checks = {c['check']: c for c in json.loads(result.stdout)['checks']}
    return checks['Worker releases']


def _states(server):
    result = _run('scheduler-manage', server.config_path, 'service',
                  'list', '--format', 'json', cwd=server.workdir)
    assert result.returncode == 0, result.stderr
    return sorted((s['worker'], s['up']) for s in json.loads(result.stdout))


@pytest.mark.parametrize('backend', ['sqlite'])
def test_health_and_liveness_before_and_after_a_clean_stop(scheduler):
    # worker 0 and worker 1
    port = servers.free_ports(2)
    server = scheduler(workers=2, options={'prometheus': {'port': port}})
    assert _get(port, '/healthcheck') == (503, 'no host has reported\n')
    workload.push_hosts(server, workload.host_reports(3))
    for worker in (0, 1):
        db_state.wait_for(
            lambda: _get(port + worker, '/healthcheck') == (200, 'OK\n'),
            10, 'worker %d healthy' % worker)
        assert _get(port + worker, '/nope')[0] == 404
    check = _worker_releases(server)
    assert check['result'] == 0 and '2 live workers' in check['details']
    server.stop()
    assert _states(server) == [(0, False), (1, False)]
    check = _worker_releases(server)
    assert check['result'] == 1
    assert 'No live worker' in check['details']


def test_the_release_follows_its_tags_and_notes_sit_under_releases():
    # the version was 0.2.0.dev205 and every note sat under "0.0.0"
    root = pathlib.Path(__file__).resolve().parents[2]
    tags = subprocess.run(['git', 'tag', '--list', '[0-9]*'], cwd=root,
                          capture_output=True, text=True, check=True,
                          timeout=30).stdout.split()
    listed = dict(line.split() for line in
                  (root / 'releasenotes' / 'releases').read_text().splitlines()
                  if line.strip() and not line.startswith('#'))
    assert {'0.1.0', '0.2.0', '0.3.0'} <= set(listed)
    assert set(listed) <= set(tags), (
        'release tags missing from this clone; '
        'bash .ci/release-tags adds them')
    for tag, commit in listed.items():
        assert subprocess.run(
            ['git', 'rev-parse', tag + '^{commit}'], cwd=root,
            capture_output=True, text=True, check=True,
            timeout=30).stdout.strip() == commit
    assert all(Version(version.release()) > Version(tag) for tag in tags)
    report = subprocess.run([str(BIN / 'reno'), 'report'], cwd=root,
                            capture_output=True, text=True, check=True,
                            timeout=120).stdout
    titles = re.findall(r'^(\S.*)\n=+$', report, re.MULTILINE)
    releases = [t for t in titles if t != 'Release Notes']
    # notes since the last tag, if any, come first, under the release
    # under way; every other title is a tag
    if releases[0].endswith('(unreleased)'):
        releases = releases[1:]
    assert releases and set(releases) <= set(tags)
    assert not any(t.endswith('(unreleased)') for t in releases)
