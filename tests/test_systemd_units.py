"""etc/systemd's units pass ``systemd-analyze verify`` (where systemd is
installed; a parse check otherwise) with ExecStart pointed at this
environment's console script, and the wheel carries them and etc/."""

import configparser
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
UNITS = sorted((ROOT / 'etc' / 'systemd').glob('*.service'))
BIN = pathlib.Path(sys.executable).parent


@pytest.mark.parametrize('unit', UNITS, ids=[u.name for u in UNITS])
def test_unit_verifies(unit, tmp_path):
    text = unit.read_text().replace('/usr/local/bin/', '%s/' % BIN)
    parsed = configparser.ConfigParser(strict=False, interpolation=None)
    parsed.read_string(text)
    command = parsed['Service']['ExecStart'].split()
    assert pathlib.Path(command[0]).name == unit.stem
    assert '--config-file' in command
    assert parsed['Service']['ExecReload'].endswith('-HUP $MAINPID')
    if shutil.which('systemd-analyze') is None:
        return
    copy = tmp_path / unit.name
    copy.write_text(text)
    result = subprocess.run(['systemd-analyze', 'verify', str(copy)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_setup_cfg_installs_etc_and_the_units():
    parsed = configparser.ConfigParser()
    parsed.read(ROOT / 'setup.cfg')
    data = parsed['files']['data_files']
    for path in sorted((ROOT / 'etc' / 'scheduler').iterdir()) + UNITS:
        assert str(path.relative_to(ROOT)) in data
