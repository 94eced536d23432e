"""Configuration has no global state: every ConfigOpts is independent."""

from scheduler import conf as sched_conf


def _new():
    conf = sched_conf.new_config()
    conf([], default_config_files=[], default_config_dirs=[])
    return conf


def test_overrides_do_not_leak_between_configs():
    first = _new()
    first.set_override('max_attempts', 7, 'scheduler')
    first.set_override('scheduler', '1.0', 'upgrade_levels')
    first.set_override('host_subset_size', 5, 'filter_scheduler')
    second = _new()
    assert second.scheduler.max_attempts == 3
    assert second.upgrade_levels.scheduler is None
    assert second.filter_scheduler.host_subset_size == 1


def test_register_all_is_idempotent():
    conf = _new()
    sched_conf.register_all(conf)
    assert conf.scheduler.topic == 'scheduler'


def test_defaults_the_services_rely_on():
    conf = _new()
    assert conf.scheduler.service_down_time == 60
    assert conf.scheduler.claim_retries >= 1
    assert conf.database.connection.startswith('sqlite:///')
