"""The documentation builds, and its examples run as they are written.

``doc/source`` builds with Sphinx with warnings as errors (the
configuration reference is generated from the options). Every ``$ ``
line of a ``.. code-block:: console`` in ``doc/source`` runs, in page
order, in a sandbox whose ``~/.scheduler/scheduler.conf`` points at a
SQLite file (the commands find it as they would find
``/etc/scheduler/scheduler.conf``); so does README's block of operator
commands. Release notes pass ``reno lint``.
"""

import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = ROOT / 'doc' / 'source'
BIN = pathlib.Path(sys.executable).parent


def _console_commands(path):
    commands = []
    for block in re.findall(r'^\.\. code-block:: console\n\n((?:   .*\n|\n)+)',
                            path.read_text(), re.MULTILINE):
        commands += [line.strip()[2:] for line in block.splitlines()
                     if line.strip().startswith('$ ')]
    return commands


PAGES = sorted(p for p in SOURCE.rglob('*.rst') if _console_commands(p))


def test_docs_build_without_warnings(tmp_path):
    result = subprocess.run(
        [str(BIN / 'sphinx-build'), '-q', '-W', '-b', 'html', str(SOURCE),
         str(tmp_path / 'html')], capture_output=True, text=True,
        timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.fixture
def sandbox(tmp_path):
    home = tmp_path / 'home'
    (home / '.scheduler').mkdir(parents=True)
    (home / '.scheduler' / 'scheduler.conf').write_text(
        '[DEFAULT]\ntransport_url = kombu+memory:////\n'
        '[database]\nconnection = sqlite:///%s\n' % (tmp_path / 'db.sqlite'))
    env = dict(os.environ, HOME=str(home),
               PATH='%s%s%s' % (BIN, os.pathsep, os.environ['PATH']))
    return env, tmp_path


@pytest.mark.parametrize('page', PAGES,
                         ids=[str(p.relative_to(SOURCE)) for p in PAGES])
def test_console_examples_run(page, sandbox):
    env, cwd = sandbox
    subprocess.run([str(BIN / 'scheduler-manage'), 'db', 'sync'], env=env,
                   cwd=cwd, check=True, capture_output=True)
    for command in _console_commands(page):
        result = subprocess.run(shlex.split(command), env=env, cwd=cwd,
                                capture_output=True, text=True, timeout=120)
        # 1 is a warning of scheduler-status (no live worker here)
        assert result.returncode in (0, 1), (command, result.stderr)
        assert 'Traceback' not in result.stdout + result.stderr, command
        assert 'usage:' not in result.stderr, command


def _readme_operator_commands():
    text = (ROOT / 'README.rst').read_text()
    marker = 'a test runs these lines as\nthey are::\n'
    after = text[text.index(marker) + len(marker):]
    block = re.match(r'((?:\n|    .*\n)+)', after).group(1)
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_readme_operator_commands_run(sandbox):
    env, cwd = sandbox
    commands = _readme_operator_commands()
    assert commands[0] == 'scheduler-manage db sync'
    for command in commands:
        result = subprocess.run(shlex.split(command), env=env, cwd=cwd,
                                capture_output=True, text=True, timeout=120)
        # 1: "no such item" of show/delete, a warning of scheduler-status
        assert result.returncode in (0, 1), (command, result.stderr)
        assert 'Traceback' not in result.stdout + result.stderr, command


def test_release_notes_lint():
    result = subprocess.run([str(BIN / 'reno'), 'lint'], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
