"""[upgrade_levels] options: RPC version caps for rolling upgrades.

``scheduler`` is read by ``scheduler.client.rpcapi.SchedulerAPI``: a version, a
release name from ``rpcapi.VERSION_ALIASES`` or ``auto``; the other two
options tune ``auto``.
"""

from oslo_config import cfg

GROUP = cfg.OptGroup('upgrade_levels', title='RPC version caps')

upgrade_levels_opts = [
    cfg.StrOpt('scheduler',
               help='Highest RPC API version the scheduler client sends '
                    'during a rolling upgrade. Possible values: unset (no '
                    'cap: every worker runs this release); a version such '
                    'as "1.2"; a release name such as "0.1" (the RPC '
                    'version that release serves); or "auto": the lowest '
                    'version any live scheduler worker reports, asked over '
                    'RPC and cached for auto_cache_seconds (a worker too '
                    'old to answer counts as the oldest supported release). '
                    'Related options: auto_cache_seconds, auto_timeout.'),
    cfg.IntOpt('auto_cache_seconds',
               default=60, min=1,
               help='With scheduler = auto: how long a client keeps the '
                    'version the workers reported before it asks again. '
                    'Once the last old worker is gone, clients lift their '
                    'cap within this time.'),
    cfg.IntOpt('auto_timeout',
               default=10, min=1,
               help='With scheduler = auto: seconds to wait for a worker '
                    'to report its version; no answer counts as the '
                    'oldest supported release.'),
]


def register_opts(conf):
    # A fresh group each time: register_group copies it shallowly, so
    # registering the module's GROUP would share one option table, and
    # every set_override, between all ConfigOpts of the process.
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(upgrade_levels_opts, group=GROUP)


def list_opts():
    return {GROUP: upgrade_levels_opts}
