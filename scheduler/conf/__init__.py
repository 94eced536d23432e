"""Configuration for the scheduler: one module per option group.

There is no global ``CONF``. Every entry point (daemon, CLI, client, test)
creates its own ``oslo_config.cfg.ConfigOpts`` and calls :func:`register_all`
(or only the ``register_opts`` it needs) before reading options.
"""

from oslo_config import cfg

from scheduler.conf import database
from scheduler.conf import filter_scheduler
from scheduler.conf import heartbeat
from scheduler.conf import limits
from scheduler.conf import messaging
from scheduler.conf import metrics
from scheduler.conf import nova
from scheduler.conf import pci
from scheduler.conf import placement_feed
from scheduler.conf import policy
from scheduler.conf import prometheus
from scheduler.conf import scheduler as scheduler_group
from scheduler.conf import service
from scheduler.conf import solver
from scheduler.conf import upgrade_levels

_MODULES = (service, heartbeat, scheduler_group, filter_scheduler, solver,
            metrics,
            pci, prometheus, upgrade_levels, database, messaging, policy,
            limits, nova, placement_feed)


def register_all(conf: cfg.ConfigOpts) -> cfg.ConfigOpts:
    """Register every option the scheduler reads on ``conf``; idempotent."""
    for module in _MODULES:
        module.register_opts(conf)
    return conf


def new_config() -> cfg.ConfigOpts:
    """A fresh ``ConfigOpts`` with every scheduler option registered."""
    return register_all(cfg.ConfigOpts())
