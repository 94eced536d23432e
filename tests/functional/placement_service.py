"""Placement 16.0.0 as a real WSGI service on 127.0.0.1, for functional tests.

Placement runs from the side virtualenv ``.nova-venv`` (where ``.ci/run``
installs ``openstack-placement==16.0.0`` beside nova), never in the
scheduler's: ``running(workdir)`` writes a ``placement.conf`` (a SQLite
file of its own, ``[api] auth_strategy = noauth2``), runs
``placement-manage db sync``, starts ``placement.wsgi.api``'s application
under ``wsgiref`` on a free port (the child binds port 0 and prints the
port it got) and yields a ``PlacementService``::

    with placement_service.running(tmp_path) as placement:
        placement.request('POST', '/resource_providers', {'name': 'cn1'})

Without placement in the side virtualenv it skips, saying how to install
it; with ``CI=true`` it fails instead. ``request`` speaks plain HTTP as
nova-compute's report client does, with the noauth2 token ``admin``.
"""

import contextlib
import json
import os
import pathlib
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = ROOT / '.nova-venv' / 'bin'
INSTALL = '%s/pip install openstack-placement==16.0.0' % VENV
TOKEN = 'admin'
MICROVERSION = '1.39'
_SERVE = '''
import os, sys
from wsgiref import simple_server

class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass

os.environ['OS_PLACEMENT_CONFIG_DIR'] = sys.argv[1]
from placement.wsgi import api
server = simple_server.make_server('127.0.0.1', 0, api.application,
                                   handler_class=Quiet)
print(server.server_port, flush=True)
server.serve_forever()
'''


def require_placement():
    """Skip (or, with ``CI=true``, fail) unless placement is installed."""
    python = VENV / 'python'
    if python.exists() and subprocess.run(
            [str(python), '-c', 'import placement.wsgi'],
            capture_output=True).returncode == 0:
        return python
    why = ('openstack-placement 16.0.0 is missing from %s; install it '
           'with: %s' % (VENV.parent, INSTALL))
    if os.environ.get('CI') == 'true':
        pytest.fail(why, pytrace=False)
    pytest.skip(why)


class PlacementService:

    def __init__(self, url, log_path):
        self.url = url
        self.log_path = log_path

    def request(self, method, path, body=None, expect=(200, 201, 204)):
        """One plain HTTP request; the decoded JSON answer (or None)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data,
                                     method=method)
        req.add_header('X-Auth-Token', TOKEN)
        req.add_header('OpenStack-API-Version',
                       'placement %s' % MICROVERSION)
        if data is not None:
            req.add_header('Content-Type', 'application/json')
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read()
        if status not in expect:
            raise AssertionError('%s %s: HTTP %s %s' % (method, path, status,
                                                        text[:300]))
        return json.loads(text) if text else None

    def tail(self, lines=30):
        text = self.log_path.read_text(errors='replace')
        return '\n'.join(text.splitlines()[-lines:])


def _write_conf(workdir):
    conf_dir = workdir / 'placement-etc'
    conf_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / 'placement.conf').write_text(
        '[DEFAULT]\nlog_file = %s\n\n[api]\nauth_strategy = noauth2\n\n'
        '[placement_database]\nconnection = sqlite:///%s\n'
        % (workdir / 'placement.log', workdir / 'placement.sqlite'))
    return conf_dir


@contextlib.contextmanager
def running(workdir):
    """Placement on a fresh database, up until the block ends."""
    python = require_placement()
    workdir = pathlib.Path(workdir)
    conf_dir = _write_conf(workdir)
    subprocess.run([str(VENV / 'placement-manage'), '--config-file',
                    str(conf_dir / 'placement.conf'), 'db', 'sync'],
                   check=True, capture_output=True, timeout=120)
    log_path = workdir / 'placement-wsgi.log'
    with open(log_path, 'w') as log:
        process = subprocess.Popen(
            [str(python), '-c', _SERVE, str(conf_dir)],
            stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        port = _read_port(process, log_path)
        yield PlacementService('http://127.0.0.1:%d' % port, log_path)
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stdout.close()


def _read_port(process, log_path):
    line = process.stdout.readline().strip()
    if not line.isdigit():
        process.kill()
        sys.stderr.write(log_path.read_text(errors='replace')[-3000:])
        raise AssertionError('placement did not start (log: %s)' % log_path)
    return int(line)
