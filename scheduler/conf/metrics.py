"""[metrics] options: which host metrics MetricsWeigher and MetricsFilter
read, and how a missing one counts."""

from oslo_config import cfg

GROUP = cfg.OptGroup('metrics', title='Host metrics options')

metrics_opts = [
    cfg.ListOpt('weight_setting',
                default=[],
                help='Metrics MetricsWeigher adds up, as "name=ratio" '
                     'pairs separated by commas, e.g. '
                     '"cpu.user.percent=-1.0, cpu.idle.percent=0.5". A '
                     'host\'s weight is the sum of value * ratio over '
                     'these metrics; MetricsFilter passes only hosts that '
                     'report all of them. An entry without "=" or with a '
                     'ratio that is not a number stops the service at '
                     'start-up. Related options: required, '
                     'weight_of_unavailable, [filter_scheduler] '
                     'metrics_weight_multiplier.'),
    cfg.BoolOpt('required',
                default=True,
                help='What MetricsWeigher does with a host that lacks a '
                     'metric of weight_setting. True: the request fails '
                     'with NoValidHost naming the host and metric (enable '
                     'MetricsFilter to remove such hosts first). False: '
                     'the host gets weight_of_unavailable as its weight. '
                     'Related options: weight_setting, '
                     'weight_of_unavailable.'),
    cfg.FloatOpt('weight_of_unavailable',
                 default=-10000.0,
                 help='Weight MetricsWeigher gives a host that lacks a '
                      'metric of weight_setting when required is False. '
                      'Keep it far below any real weighted sum so such '
                      'hosts come last. Related options: required.'),
]


def register_opts(conf):
    # A fresh group each time: register_group copies it shallowly, so
    # registering the module's GROUP would share one option table, and
    # every set_override, between all ConfigOpts of the process.
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(metrics_opts, group=GROUP)


def list_opts():
    return {GROUP: metrics_opts}
