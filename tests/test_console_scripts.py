"""Every console script this distribution installs answers ``--version``
with the release, as an operator checking a host would ask it."""

import os
import subprocess
import sys
from importlib import metadata

import pytest

from scheduler import version

SCRIPTS = sorted(
    ep.name for ep in metadata.distribution(
        version.DISTRIBUTION).entry_points
    if ep.group == 'console_scripts')


def test_the_expected_scripts_are_installed():
    assert {'scheduler-server', 'scheduler-manage', 'scheduler-status',
            'scheduler-sim', 'scheduler-bench'} <= set(SCRIPTS)


@pytest.mark.parametrize('script', SCRIPTS)
def test_version(script):
    path = os.path.join(os.path.dirname(sys.executable), script)
    result = subprocess.run([path, '--version'], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert version.release() in result.stdout + result.stderr
    assert version.release() != 'unknown'
