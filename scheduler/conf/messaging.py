"""oslo.messaging options, registered on a private ``ConfigOpts``.

oslo.messaging registers some of its groups (``oslo_messaging_metrics``,
``oslo_messaging_tracing``) only on the global ``cfg.CONF``, at import time.
A transport built on any other ``ConfigOpts`` then fails with
``NoSuchOptError``, so we register those groups on ours as well.
"""

import oslo_messaging
from oslo_messaging import opts as messaging_opts


EXECUTOR_THREADS = 16


def _import_group(conf, module_name, attr, group):
    import importlib
    opts = getattr(importlib.import_module(module_name), attr)
    conf.register_opts(opts, group=group)


def register_opts(conf):
    oslo_messaging.set_transport_defaults(control_exchange='scheduler')
    for group, opts in messaging_opts.list_opts():
        conf.register_opts(opts, group=group)
    _import_group(conf, 'oslo_messaging._metrics.client',
                  'oslo_messaging_metrics', 'oslo_messaging_metrics')
    _import_group(conf, 'oslo_messaging._tracing.client',
                  'oslo_messaging_tracing', 'oslo_messaging_tracing')
    # A worker is CPU-bound past a few concurrent requests; 64 threads per
    # worker only queue on the database pool (see [database] defaults).
    conf.set_default('executor_thread_pool_size', EXECUTOR_THREADS)


def list_opts():
    # Published by oslo.messaging under its own generator namespace.
    return {}
