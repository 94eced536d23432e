"""doc/source/admin/production.rst means what it says: every option of
its ``ini`` blocks is one the scheduler reads, with a value it accepts;
its HAProxy block is a configuration HAProxy accepts."""

import configparser
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from scheduler import conf as sched_conf
from scheduler.transport import broker

PAGE = (pathlib.Path(__file__).resolve().parents[2] / 'doc' / 'source'
        / 'admin' / 'production.rst')


def _blocks(language):
    return [re.sub(r'(?m)^   ', '', block) for block in re.findall(
        r'^\.\. code-block:: %s\n\n((?:   .*\n|\n)+)' % language,
        PAGE.read_text(), re.MULTILINE)]


@pytest.mark.parametrize('block', _blocks('ini'))
def test_every_option_is_read_and_accepted(block, tmp_path):
    path = tmp_path / 'scheduler.conf'
    path.write_text(block)
    conf = sched_conf.new_config()
    conf(['--config-file', str(path)], project='scheduler',
         default_config_files=[], default_config_dirs=[])
    parsed = configparser.ConfigParser(interpolation=None)
    parsed.read_string(block)
    for section in parsed.sections() + ['DEFAULT']:
        group = conf if section == 'DEFAULT' else conf[section]
        for name, value in parsed.items(section):
            if section != 'DEFAULT' and name in parsed.defaults():
                continue
            assert str(group[name]).lower() == value.lower(), (
                section, name, group[name])
    if 'oslo_messaging_rabbit' in parsed:
        # the broker settings the servers derive from them
        settings = broker.Broker(conf)
        assert settings.quorum and settings.transient_quorum
        assert len(settings.kombu_urls()) == 3


def test_the_haproxy_block_is_accepted_by_haproxy(tmp_path):
    if shutil.which('haproxy') is None:
        if os.environ.get('CI') == 'true':
            pytest.fail('haproxy is required in CI (apt install haproxy)')
        pytest.skip('haproxy is not installed')
    [block] = _blocks('text')[:1]
    path = tmp_path / 'haproxy.cfg'
    path.write_text('defaults\n    timeout connect 2s\n\n' + block)
    result = subprocess.run(['haproxy', '-c', '-f', str(path)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
