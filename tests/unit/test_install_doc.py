"""doc/source/install.rst can be followed verbatim (issue 23.9): it
installs from the source tree (``pip install openstack-scheduler`` named
nothing on any index), names every console script the package installs,
and says the wheel puts the samples and the systemd unit where
setup.cfg's ``data_files`` does. (The wheel itself was checked by hand:
``pip wheel .`` holds ``etc/scheduler/*`` and the unit under ``.data/``.)
"""

import configparser
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
INSTALL = (ROOT / 'doc' / 'source' / 'install.rst').read_text()
PREFIX = '/opt/scheduler'


def _setup_cfg():
    parsed = configparser.ConfigParser()
    parsed.read(ROOT / 'setup.cfg')
    return parsed


def test_it_installs_from_the_source_tree():
    commands = re.findall(r'^\s*(\S*pip) install (.*)$', INSTALL,
                          re.MULTILINE)
    assert commands == [(PREFIX + '/bin/pip',
                         '-c upper-constraints.txt .')]
    assert (ROOT / 'upper-constraints.txt').is_file()
    assert 'python3 -m venv %s' % PREFIX in INSTALL


def test_it_names_every_console_script():
    scripts = {line.split('=')[0].strip() for line in _setup_cfg()[
        'entry_points']['console_scripts'].splitlines() if line.strip()}
    named = set(re.findall(r'``(scheduler-[a-z-]+)``', INSTALL))
    assert scripts == named


def test_the_installed_files_are_where_it_says():
    data = _setup_cfg()['files']['data_files']
    targets = {line.split('=')[0].strip() for line in data.splitlines()
               if '=' in line}
    assert targets == {'etc/scheduler', 'share/scheduler/systemd'}
    for target in targets:
        assert '``%s/%s``' % (PREFIX, target) in INSTALL
    for unit in (ROOT / 'etc' / 'systemd').glob('*.service'):
        assert '``etc/systemd/%s``' % unit.name in INSTALL
