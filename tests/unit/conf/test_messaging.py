"""[DEFAULT] and oslo.messaging options on the scheduler's own ConfigOpts."""


def test_our_defaults_leave_another_config_of_the_process_alone():
    """A Nova service that imports the client (or runs a scheduler in its
    process) keeps its own control_exchange default."""
    from oslo_config import cfg
    from oslo_messaging import opts as messaging_opts
    from scheduler import conf as sched_conf
    ours = sched_conf.new_config()
    sched_conf.messaging.register_opts(ours)
    theirs = cfg.ConfigOpts()
    for group, opts in messaging_opts.list_opts():
        theirs.register_opts(opts, group=group)
    ours([])
    theirs([])
    assert ours.control_exchange == 'scheduler'
    assert theirs.control_exchange == 'openstack'
