"""The repository keeps its promises: generated sample config is current,
README's test command is what CI runs, entry points load."""

import os
import pathlib
import re
import subprocess
import sys

from stevedore import extension

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_config_sample_is_current(tmp_path):
    out = tmp_path / 'scheduler.conf.sample'
    subprocess.run(
        [os.path.join(os.path.dirname(sys.executable),
                      'oslo-config-generator'),
         '--config-file',
         str(ROOT / 'etc/scheduler/scheduler-config-generator.conf'),
         '--output-file', str(out)],
        check=True, cwd=ROOT, capture_output=True)
    committed = (ROOT / 'etc/scheduler/scheduler.conf.sample').read_text()
    assert out.read_text() == committed, (
        'etc/scheduler/scheduler.conf.sample is out of date: run '
        '"tox -e genconfig" and commit the result')


def _readme_commands():
    text = (ROOT / 'README.rst').read_text()
    return re.findall(r'^    (python3 -m venv .*)$', text, re.MULTILINE)


def test_ci_runs_the_readme_test_command():
    commands = _readme_commands()
    assert len(commands) == 2, commands
    ci_script = (ROOT / '.ci/run').read_text()
    assert commands[1] in ci_script.splitlines()


def test_readme_demo_command_uses_the_simulator():
    assert 'scheduler-sim' in _readme_commands()[0]


def test_plugin_entry_points_load():
    for namespace in ('scheduler.filters', 'scheduler.weighers'):
        manager = extension.ExtensionManager(namespace)
        assert manager.names(), namespace
        for ext in manager:
            assert ext.plugin.__name__ == ext.name


def test_upper_constraints_pin_what_requirements_admit():
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    pins = {}
    for line in (ROOT / 'upper-constraints.txt').read_text().splitlines():
        if line.strip() and not line.startswith('#'):
            name, version = line.split('==')
            pins[canonicalize_name(name)] = version
    for line in (ROOT / 'requirements.txt').read_text().splitlines():
        if not line.strip() or line.startswith('#'):
            continue
        wanted = Requirement(line)
        name = canonicalize_name(wanted.name)
        assert name in pins, '%s is not in upper-constraints.txt' % name
        assert wanted.specifier.contains(pins[name]), (
            '%s==%s is outside requirements.txt\'s %s' % (
                name, pins[name], wanted.specifier))
