"""oslo.messaging options, registered on a private ``ConfigOpts``.

oslo.messaging lists most of its options publicly
(``oslo_messaging.opts.list_opts``), but registers two groups
(``[oslo_messaging_metrics]``, ``[oslo_messaging_tracing]``, new in
18.3.0) only on the global ``cfg.CONF``, at import time, while its RPC
client reads them from the ``ConfigOpts`` it is given: a client or
notifier built on any other one fails with ``NoSuchOptError``. No public
API hands out those option objects, so the two groups are declared here
again (``BORROWED``), with oslo.messaging's names, types and defaults;
``tests/unit/conf/test_messaging.py`` holds them to the groups
oslo.messaging registered in the running process.

Our defaults (``control_exchange = scheduler`` ...) are set on our
``ConfigOpts`` only. oslo.messaging's ``set_transport_defaults`` would
change the default of the option objects every ``ConfigOpts`` of the
process shares: a Nova service that imports ``scheduler.client`` (or
runs a scheduler in its process) would then send its own RPC to the
``scheduler`` exchange.
"""

from oslo_config import cfg
from oslo_messaging import opts as messaging_opts


EXECUTOR_THREADS = 16
#: [oslo_messaging_rabbit] defaults: reconnect within 2 s of the broker's
#: return (register_opts)
RABBIT_RECONNECT = {'rabbit_retry_interval': 1, 'rabbit_retry_backoff': 0,
                    'rabbit_interval_max': 2, 'kombu_reconnect_delay': 0.5,
                    'heartbeat_timeout_threshold': 10}

#: the groups oslo.messaging registers on ``cfg.CONF`` only (module doc)
BORROWED = {
    'oslo_messaging_metrics': [
        cfg.BoolOpt('metrics_enabled', default=False,
                    help='Send RPC metrics to an oslo.metrics collector.'),
        cfg.IntOpt('metrics_buffer_size', default=1000,
                   help='Metrics kept while the collector is away.'),
        cfg.StrOpt('metrics_socket_file',
                   default='/var/tmp/metrics_collector.sock',  # nosec
                   help='The collector\'s Unix socket.'),
        cfg.StrOpt('metrics_process_name', default='',
                   help='The process name the metrics carry.'),
        cfg.IntOpt('metrics_thread_stop_timeout', default=10,
                   help='Seconds after its last send before the sending '
                        'thread stops (it starts again with the next '
                        'metric).'),
    ],
    'oslo_messaging_tracing': [
        cfg.BoolOpt('tracing_enabled', default=False,
                    help='Trace RPC calls with OpenTelemetry.'),
        cfg.StrOpt('tracing_service_name', default='openstack',
                   help='The service name of the spans.'),
        cfg.StrOpt('otel_exporter_otlp_endpoint',
                   default='http://localhost:4318',
                   help='Where spans are exported (OTLP).'),
        cfg.StrOpt('otlp_protocol', default='http/protobuf',
                   choices=['http/protobuf', 'grpc'],
                   help='The OTLP protocol.'),
        cfg.BoolOpt('insecure', default=False,
                    help='No TLS verification of the OTLP endpoint '
                         '(gRPC only).'),
    ],
}


def register_opts(conf):
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    conf.set_default('control_exchange', 'scheduler')
    for group, opts in BORROWED.items():
        conf.register_opts(opts, group=group)
    # A worker is CPU-bound past a few concurrent requests; 64 threads per
    # worker only queue on the database pool (see [database] defaults).
    conf.set_default('executor_thread_pool_size', EXECUTOR_THREADS)
    # Placements resume within seconds of a broker's return: the driver
    # retries every 1, 3, 5 ... up to 30 s by default (a worker found the
    # broker back 13.5 s late after a 70 s outage); at most 2 s here.
    # A broker that died without closing its sockets is noticed within
    # two to three heartbeat timeouts, and the broker notices a worker
    # so lost (a host cut off the network) as fast, giving the calls it
    # held to other workers: 24.6 s at most with 10 s. A production
    # cluster sets 3 s (6.2-8.0 s; doc/source/admin/production.rst); the
    # default stays at 10 s, because on a machine whose cores the broker
    # shares with everything else (CI: 2 cores, three RabbitMQ and three
    # Galera nodes) 3 s made connections drop for missed heartbeats.
    for name, value in RABBIT_RECONNECT.items():
        conf.set_default(name, value, group='oslo_messaging_rabbit')


def list_opts():
    # The rest is published by oslo.messaging under its own generator
    # namespace; these two groups it does not publish (module doc).
    return dict(BORROWED)
