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
    conf.register_group(GROUP)
    conf.register_opts(upgrade_levels_opts, group=GROUP)


def list_opts():
    return {GROUP: upgrade_levels_opts}
