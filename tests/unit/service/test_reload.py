"""SIGHUP in the parent: the new files are checked as at start-up before
anything changes; a usable configuration is applied, logging included;
the process layout waits for a restart."""

import logging as py_logging

import pytest
from oslo_log import log as logging

from scheduler import conf as sched_conf
from scheduler.service import reload


@pytest.fixture
def files(tmp_path):
    path = tmp_path / 'scheduler.conf'
    path.write_text('[DEFAULT]\nworkers = 3\n')
    conf = sched_conf.new_config()
    logging.register_options(conf)
    conf(['--config-file', str(path)], project='scheduler',
         default_config_files=[], default_config_dirs=[])
    yield path, conf
    conf.clear_override('workers')


@pytest.mark.parametrize('text, words', [
    ('[DEFAULT]\nworkers = two\n',
     'invalid value for [DEFAULT] workers'),
    ('[filter_scheduler]\nenabled_filters = ComputeFilter,RamFilter\n',
     'unknown filter RamFilter'),
    ('[filter_scheduler]\nram_weight_multiplier = lots\n',
     'invalid value for [filter_scheduler] ram_weight_multiplier'),
    ('[oslo_policy]\npolicy_file = %(dir)s/policy.yaml\n', 'policy'),
    ('[DEFAULT]\ntransport_url = rabit://u:secret@h/\n',
     "unknown transport 'rabit'"),
])
def test_a_bad_configuration_changes_nothing(files, caplog, text, words):
    path, conf = files
    (path.parent / 'policy.yaml').write_text('"scheduler:x": "role:a" or\n')
    path.write_text('[DEFAULT]\nworkers = 3\ndebug = true\n'
                    + text % {'dir': path.parent})
    assert reload.prepare(conf) is False
    assert conf.workers == 3 and conf.debug is False
    [line] = [r.getMessage() for r in caplog.records
              if 'Not reloading' in r.getMessage()]
    assert words in line and 'secret' not in line


def test_a_good_configuration_is_applied_with_logging(files, caplog):
    path, conf = files
    path.write_text('[DEFAULT]\nworkers = 5\ndebug = true\n'
                    '[filter_scheduler]\nram_weight_multiplier = 2.5\n')
    try:
        assert reload.prepare(conf) is True
        assert conf.debug is True
        assert conf.filter_scheduler.ram_weight_multiplier == 2.5
        assert py_logging.getLogger().level == py_logging.DEBUG
    finally:
        conf.set_override('debug', False)
        logging.setup(conf, 'scheduler')
    # the parent forked 3 workers: 5 waits for the next start
    assert conf.workers == 3
    assert 'workers = 5 takes effect when scheduler-server restarts' \
        in caplog.text
