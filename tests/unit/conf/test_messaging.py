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


def test_the_borrowed_groups_are_oslo_messagings_own():
    """``BORROWED`` declares again what oslo.messaging registers on
    ``cfg.CONF`` only: the same option names, each with the same
    default, for every group this release of oslo.messaging has."""
    import oslo_messaging  # noqa: F401  (registers the groups)
    from oslo_config import cfg
    from scheduler.conf import messaging
    for group, opts in messaging.BORROWED.items():
        if group not in cfg.CONF:
            continue    # an older oslo.messaging: it reads none either
        theirs = {name: cfg.CONF[group][name] for name in cfg.CONF[group]}
        assert {opt.dest: opt.default for opt in opts} == theirs, group


def test_a_client_on_our_config_reads_them():
    """oslo.messaging's RPC client, built on the scheduler's ConfigOpts,
    finds the groups it reads when it sends (``NoSuchOptError`` without
    them)."""
    import oslo_messaging
    from scheduler import conf as sched_conf
    ours = sched_conf.new_config()
    sched_conf.messaging.register_opts(ours)
    ours([])
    transport = oslo_messaging.get_rpc_transport(ours, url='fake:/')
    try:
        oslo_messaging.get_rpc_client(
            transport, oslo_messaging.Target(topic='t')).cast({}, 'ping')
    finally:
        transport.cleanup()
    assert ours.oslo_messaging_metrics.metrics_enabled is False
