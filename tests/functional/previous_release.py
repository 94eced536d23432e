"""The previous release of this repository, installed beside the current code.

``PREVIOUS_RELEASE`` is the one place that names the release the current
code must work with during a rolling upgrade (a commit of this repository's
own history). ``install()`` checks it out with ``git worktree add --detach``
into a temporary directory, installs it (not editable) into a virtualenv
cached outside the clone, under ``$XDG_CACHE_HOME`` (``~/.cache``) in
``openstack-scheduler/venv-previous/<commit>-py<X.Y>/``, and removes the
worktree again; later runs, from this clone or a fresh one, find the venv
and return at once (a lock file keeps two runs from building it at once).
``SCHEDULER_PREVIOUS_CACHE`` names another cache directory.

``PreviousServer`` is a ``SchedulerServer`` whose ``db sync`` and daemon run
from that virtualenv, in the server's own work directory (never from the
repository root, where ``python -m`` would import the current code).
``run_previous(script, *args)`` runs a helper script of this directory with
the previous release's interpreter (an old conductor or tracker).
"""

import fcntl
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

from tests.functional import server as server_mod

#: release 0.3.0, the last before the transport on kombu's public API;
#: bump it when the next release lands
PREVIOUS_RELEASE = '0ef7c73'

ROOT = server_mod.ROOT
CACHE = pathlib.Path(os.environ.get('SCHEDULER_PREVIOUS_CACHE') or (
    pathlib.Path(os.environ.get('XDG_CACHE_HOME')
                 or pathlib.Path.home() / '.cache')
    / 'openstack-scheduler' / 'venv-previous'))
INSTALL_TIMEOUT = 900


def _git(*args, cwd=ROOT):
    return subprocess.run(['git', *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def venv_dir(commit=PREVIOUS_RELEASE):
    return CACHE / ('%s-py%d.%d' % ((commit,) + sys.version_info[:2]))


def python(commit=PREVIOUS_RELEASE):
    return venv_dir(commit) / 'bin' / 'python'


def _build(target, commit):
    """Create the venv at ``target`` from a worktree of ``commit``."""
    checkout = pathlib.Path(tempfile.mkdtemp(prefix='sched-previous-'))
    shutil.rmtree(checkout)
    _git('worktree', 'add', '--detach', str(checkout), commit)
    try:
        subprocess.run([sys.executable, '-m', 'venv', str(target)],
                       check=True, capture_output=True)
        result = subprocess.run(
            [str(target / 'bin' / 'pip'), 'install', '-q', str(checkout)],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        if result.returncode != 0:
            raise RuntimeError('installing %s failed:\n%s' % (
                commit, result.stderr[-3000:]))
    finally:
        _git('worktree', 'remove', '--force', str(checkout))


def install(commit=PREVIOUS_RELEASE):
    """The path of the previous release's python, installing it once."""
    target = venv_dir(commit)
    if _usable(target):
        return python(commit)
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ('%s.lock' % target.name), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _usable(target):  # another run may have built it meanwhile
            _install(target, commit)
    return python(commit)


def _usable(target):
    """Built to the end, and its interpreter still there (a venv's python
    is a link to the one that made it, which an upgrade may remove)."""
    return ((target / '.installed').exists()
            and (target / 'bin' / 'python').exists())


def _install(target, commit):
    try:
        _git('cat-file', '-e', commit + '^{commit}')
    except subprocess.CalledProcessError:
        pytest.fail('commit %s (the previous release) is not in this '
                    'repository; run the tests from a full clone'
                    % commit, pytrace=False)
    # a venv hard-codes its own path: build it in place; a build that was
    # interrupted has no marker and is started over
    shutil.rmtree(target, ignore_errors=True)
    _build(target, commit)
    (target / '.installed').write_text(commit + '\n')


ACTOR = pathlib.Path(__file__).with_name('upgrade_actor.py')
#: roles of the actors' contexts: conductors and trackers send the service
#: role (the previous release accepts and ignores roles; a release that
#: enforces policy needs them)
ACTOR_ROLES = ['service']
ACTOR_TIMEOUT = 300


def run_module(python_path, module, *args, cwd, timeout=120):
    """``python -m module args`` of some release, from ``cwd``."""
    return subprocess.run([str(python_path), '-m', module, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def start_actor(python_path, server, *args):
    """Start ``upgrade_actor.py`` under ``python_path`` (any release) on
    ``server``'s config; returns the Popen (stdout piped)."""
    return subprocess.Popen(
        [str(python_path), str(ACTOR), '--config-file',
         str(server.config_path), '--roles', ','.join(ACTOR_ROLES), *args],
        cwd=server.workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


def finish_actor(process):
    """Wait for an actor; fail the test unless it exited 0. Returns the
    JSON lines it printed, parsed."""
    try:
        out, err = process.communicate(timeout=ACTOR_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail('actor timed out\n%s' % err[-3000:], pytrace=False)
    if process.returncode != 0:
        pytest.fail('actor exited %d\n%s' % (process.returncode,
                                             err[-3000:]), pytrace=False)
    return [json.loads(line) for line in out.splitlines() if line.strip()]


class PreviousServer(server_mod.SchedulerServer):
    """``scheduler-server`` of the previous release: same config, logs and
    teardown as the current one, run by the previous release's python
    from the server's work directory."""

    release = 'previous release'

    def __init__(self, python_path, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.python = python_path

    @property
    def cwd(self):
        return self.workdir
