"""[DEFAULT] options of the service records each worker keeps
(``scheduler.db.services``)."""

from oslo_config import cfg

heartbeat_opts = [
    cfg.IntOpt('heartbeat_interval',
               default=10, min=1,
               help='Seconds between two heartbeats a scheduler worker '
                    'writes to its service record in the database. '
                    'Related options: worker_down_time.'),
    cfg.IntOpt('worker_down_time',
               default=60, min=1,
               help='A scheduler worker whose last heartbeat is older than '
                    'this many seconds is shown as down by '
                    '"scheduler-manage service list" and is left out of '
                    'the versions "[upgrade_levels] scheduler = auto" '
                    'and "scheduler-status upgrade check" consider. Keep it '
                    'a few times heartbeat_interval.'),
]


def register_opts(conf):
    conf.register_opts(heartbeat_opts)


def list_opts():
    return {'DEFAULT': heartbeat_opts}
