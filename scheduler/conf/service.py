"""[DEFAULT] options of the ``scheduler-server`` daemon."""

import socket

from oslo_config import cfg

service_opts = [
    cfg.StrOpt('host',
               default=socket.gethostname(),
               sample_default='<hostname>',
               help='Name of this scheduler node. Used in logs and as the '
                    'RPC server name of its workers; must be unique per '
                    'machine when several machines run the scheduler.'),
    cfg.IntOpt('workers',
               default=2, min=1,
               help='Number of worker processes that scheduler-server '
                    'starts. Every worker consumes the same RPC topic and '
                    'they never hand out the same capacity twice, so this '
                    'may be raised freely up to the number of cores.'),
    cfg.IntOpt('report_workers',
               default=0, min=0,
               help='Number of extra worker processes that serve only the '
                    'report topic (tracker reports: update_resource_stats '
                    'and instance info); the "workers" then serve only the '
                    'scheduler topic (select_destinations and the other '
                    'calls). 0: every worker serves both. With trackers '
                    'reporting all the time, a decision otherwise shares '
                    'its process and interpreter lock with the report '
                    'threads; report workers keep decisions fast (see '
                    'doc/source/performance-history.rst). A report worker '
                    'keeps no host table, so it needs little memory.'),
    cfg.IntOpt('graceful_shutdown_timeout',
               default=60, min=0,
               help='Seconds a worker waits for in-flight requests to '
                    'finish after SIGTERM before it exits anyway. '
                    '0 waits forever.'),
    cfg.IntOpt('startup_retries',
               default=5, min=0,
               help='How many times scheduler-server retries reaching the '
                    'message broker and the database at start-up before it '
                    'exits with an error.'),
    cfg.FloatOpt('startup_retry_interval',
                 default=2.0, min=0,
                 help='Seconds between two start-up connection attempts. '
                      'Related options: startup_retries.'),
]


def register_opts(conf):
    conf.register_opts(service_opts)


def list_opts():
    return {'DEFAULT': service_opts}
