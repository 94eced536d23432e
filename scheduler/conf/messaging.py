"""oslo.messaging options, registered on a private ``ConfigOpts``.

oslo.messaging registers some of its groups (``oslo_messaging_metrics``,
``oslo_messaging_tracing``) only on the global ``cfg.CONF``, at import time.
A transport built on any other ``ConfigOpts`` then fails with
``NoSuchOptError``, so we register those groups on ours as well.

Our defaults (``control_exchange = scheduler`` ...) are set on our
``ConfigOpts`` only. oslo.messaging's ``set_transport_defaults`` would
change the default of the option objects every ``ConfigOpts`` of the
process shares: a Nova service that imports ``scheduler.client`` (or
runs a scheduler in its process) would then send its own RPC to the
``scheduler`` exchange.
"""

from oslo_messaging import opts as messaging_opts


EXECUTOR_THREADS = 16
#: [oslo_messaging_rabbit] defaults: reconnect within 2 s of the broker's
#: return (register_opts)
RABBIT_RECONNECT = {'rabbit_retry_interval': 1, 'rabbit_retry_backoff': 0,
                    'rabbit_interval_max': 2, 'kombu_reconnect_delay': 0.5,
                    'heartbeat_timeout_threshold': 10}


def _import_group(conf, module_name, attr, group):
    """Register ``attr`` of ``module_name`` as ``group``; nothing when
    this release of oslo.messaging has no such module (it then reads no
    such group either: ``_tracing`` came with 18.3.0)."""
    import importlib
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return
    conf.register_opts(getattr(module, attr), group=group)


def register_opts(conf):
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    conf.set_default('control_exchange', 'scheduler')
    _import_group(conf, 'oslo_messaging._metrics.client',
                  'oslo_messaging_metrics', 'oslo_messaging_metrics')
    _import_group(conf, 'oslo_messaging._tracing.client',
                  'oslo_messaging_tracing', 'oslo_messaging_tracing')
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
    # Published by oslo.messaging under its own generator namespace.
    return {}
