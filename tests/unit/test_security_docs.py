"""The security examples in README.rst and doc/source/admin/security.rst are
right: the README's policy example runs as printed, and every option the
admin page's configuration examples set exists."""

import configparser
import subprocess
import sys

from scheduler import conf as sched_conf
from tests import rst_blocks

ADMIN_PAGE = 'doc/source/admin/security.rst'


def test_readme_contexts_example_runs_verbatim(tmp_path):
    code = rst_blocks.block_containing('README.rst', 'policy.new_enforcer')
    result = subprocess.run([sys.executable, '-c', code], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60,
                            env={'PYTHONPATH': str(rst_blocks.ROOT)})
    assert result.returncode == 0, result.stderr


def _ini_options(text):
    # commented-out options ("# ssl_cert_file = ...") must exist too
    text = '\n'.join(line.lstrip('# ') if ' = ' in line else line
                     for line in text.splitlines())
    parser = configparser.ConfigParser(interpolation=None,
                                       default_section='(none)')
    parser.read_string(text)
    return [(section, key) for section in parser.sections()
            for key in parser[section]]


def test_admin_page_config_examples_name_real_options():
    conf = sched_conf.new_config()
    conf([], default_config_files=[])
    blocks = [text for directive, text in rst_blocks.literal_blocks(
        ADMIN_PAGE) if directive == 'ini']
    options = [opt for text in blocks for opt in _ini_options(text)]
    assert len(options) >= 5, options
    for section, key in options:
        group = getattr(conf, section) if section != 'DEFAULT' else conf
        assert key in group, '[%s] %s is not an option' % (section, key)


def test_admin_page_has_the_broker_users_commands():
    commands = rst_blocks.block_containing(ADMIN_PAGE, 'add_vhost')
    for user in ('scheduler', 'conductor', 'tracker'):
        assert 'add_user %s' % user in commands
    assert commands.count('set_topic_permissions') == 2
