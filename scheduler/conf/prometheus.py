"""[prometheus] options: the metrics endpoint of each worker
(``scheduler.service.metrics_endpoint``)."""

from oslo_config import cfg

GROUP = cfg.OptGroup('prometheus', title='Prometheus metrics endpoint')

prometheus_opts = [
    cfg.PortOpt('port',
                default=0,
                help='First TCP port of the workers\' Prometheus text '
                     'endpoints (GET /metrics): worker N of a '
                     'scheduler-server listens on port + N. 0 disables '
                     'the endpoints. Related options: host, [DEFAULT] '
                     'workers.'),
    cfg.HostAddressOpt('host',
                       default='127.0.0.1',
                       help='Address the metrics endpoints listen on. '
                            'Related options: port.'),
]


def register_opts(conf):
    # a fresh group each time (see upgrade_levels.register_opts)
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(prometheus_opts, group=GROUP)


def list_opts():
    return {GROUP: prometheus_opts}
