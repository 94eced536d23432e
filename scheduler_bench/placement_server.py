"""Placement 16.0.0 as a real WSGI service on 127.0.0.1.

Placement runs from the side virtualenv ``.nova-venv`` of a checkout
(where ``.ci/run`` installs ``openstack-placement==16.0.0`` beside nova),
never in the scheduler's: ``running(workdir)`` writes a
``placement.conf`` (a SQLite file of its own, ``[api] auth_strategy =
noauth2``), runs ``placement-manage db sync``, starts
``placement.wsgi.api``'s application under ``wsgiref`` (one thread) on a
free port (the child binds port 0 and prints the port it got) and yields
a ``PlacementService``::

    with placement_server.running(workdir) as placement:
        placement.request('POST', '/resource_providers', {'name': 'cn1'})

``request`` speaks plain HTTP as nova-compute's report client does, with
the noauth2 token ``admin``; ``add_computes`` creates compute nodes the
way nova-compute does (the provider, then its inventories). The
functional tests (``tests/functional/placement_service.py``) and
``scheduler-bench nova_path`` share it.
"""

import concurrent.futures
import contextlib
import json
import pathlib
import subprocess
import sys
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
VENV = ROOT / '.nova-venv' / 'bin'
INSTALL = '%s/pip install openstack-placement==16.0.0' % VENV
TOKEN = 'admin'
MICROVERSION = '1.39'
# what a nova-compute with the default allocation ratios reports
COMPUTE_INVENTORIES = {
    'VCPU': {'total': 32, 'allocation_ratio': 4.0},
    'MEMORY_MB': {'total': 131072, 'reserved': 512,
                  'allocation_ratio': 1.0},
    'DISK_GB': {'total': 1000, 'allocation_ratio': 1.0},
}
_SERVE = '''
import os, sys
from wsgiref import simple_server

class Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass

class Server(simple_server.WSGIServer):
    allow_reuse_port = True

os.environ['OS_PLACEMENT_CONFIG_DIR'] = sys.argv[1]
from placement.wsgi import api
server = simple_server.make_server('127.0.0.1', int(sys.argv[2]),
                                   api.application, server_class=Server,
                                   handler_class=Quiet)
print(server.server_port, flush=True)
server.serve_forever()
'''


def placement_python():
    """The side venv's python when it has placement, else None."""
    python = VENV / 'python'
    if python.exists() and subprocess.run(
            [str(python), '-c', 'import placement.wsgi'],
            capture_output=True).returncode == 0:
        return python
    return None


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
def running(workdir, python=None, processes=1):
    """Placement on a fresh database, up until the block ends."""
    python = python or placement_python()
    if python is None:
        raise RuntimeError('openstack-placement 16.0.0 is missing from %s; '
                           'install it with: %s' % (VENV.parent, INSTALL))
    workdir = pathlib.Path(workdir)
    conf_dir = _write_conf(workdir)
    subprocess.run([str(VENV / 'placement-manage'), '--config-file',
                    str(conf_dir / 'placement.conf'), 'db', 'sync'],
                   check=True, capture_output=True, timeout=120)
    log_path = workdir / 'placement-wsgi.log'
    started, port = [], 0
    try:
        with open(log_path, 'w') as log:
            for _ in range(processes):
                started.append(subprocess.Popen(
                    [str(python), '-c', _SERVE, str(conf_dir), str(port)],
                    stdout=subprocess.PIPE, stderr=log, text=True))
                port = _read_port(started[-1], log_path)
        yield PlacementService('http://127.0.0.1:%d' % port, log_path)
    finally:
        for process in started:
            process.terminate()
            process.wait(timeout=30)
            process.stdout.close()


def _read_port(process, log_path):
    line = process.stdout.readline().strip()
    if not line.isdigit():
        process.kill()
        sys.stderr.write(log_path.read_text(errors='replace')[-3000:])
        raise RuntimeError('placement did not start (log: %s)' % log_path)
    return int(line)


def add_compute(placement, name, inventories=None):
    """One compute node as nova-compute creates it: the provider (whose
    answer has its generation), then its inventories. Its UUID."""
    rp = placement.request('POST', '/resource_providers', {'name': name})
    placement.request('PUT', '/resource_providers/%s/inventories' % rp[
        'uuid'], {'inventories': inventories or COMPUTE_INVENTORIES,
                  'resource_provider_generation': rp['generation']})
    return rp['uuid']


def add_computes(placement, names, threads=4, progress=None):
    """``add_compute`` for each name, ``threads`` clients at a time (as
    many nova-computes start at once); their UUIDs."""
    def one(name):
        uuid = add_compute(placement, name)
        if progress is not None:
            progress.update(1)
        return uuid
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, names))
