"""[upgrade_levels] options: RPC version caps for rolling upgrades."""

from oslo_config import cfg

GROUP = cfg.OptGroup('upgrade_levels', title='RPC version caps')

upgrade_levels_opts = [
    cfg.StrOpt('scheduler',
               help='Highest RPC API version the scheduler client sends, '
                    'e.g. "1.0". Set it to the oldest version still run by '
                    'any scheduler during a rolling upgrade, and unset it '
                    'once all schedulers are upgraded. Unset: no cap.'),
]


def register_opts(conf):
    # A fresh group each time: register_group copies it shallowly, so
    # registering the module's GROUP would share one option table, and
    # every set_override, between all ConfigOpts of the process.
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(upgrade_levels_opts, group=GROUP)


def list_opts():
    return {GROUP: upgrade_levels_opts}
