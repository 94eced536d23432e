"""Entry point for ``oslo-config-generator`` (``oslo.config.opts``).

Gathers the options of every ``scheduler.conf`` module. The options of
oslo.messaging, oslo.db and oslo.log are listed under their own generator
namespaces (see ``etc/scheduler/scheduler-config-generator.conf``), less
the two groups oslo.messaging does not publish (``messaging.BORROWED``).
"""

import collections

from scheduler.conf import database
from scheduler.conf import filter_scheduler
from scheduler.conf import heartbeat
from scheduler.conf import limits
from scheduler.conf import messaging
from scheduler.conf import metrics
from scheduler.conf import nova
from scheduler.conf import pci
from scheduler.conf import placement_feed
from scheduler.conf import prometheus
from scheduler.conf import scheduler as scheduler_group
from scheduler.conf import service
from scheduler.conf import solver
from scheduler.conf import upgrade_levels

_MODULES = (service, heartbeat, scheduler_group, filter_scheduler, solver,
            metrics,
            pci, prometheus, upgrade_levels, database, limits, nova,
            placement_feed, messaging)


def list_opts():
    grouped = collections.OrderedDict()
    for module in _MODULES:
        for group, opts in module.list_opts().items():
            grouped.setdefault(group, []).extend(opts)
    return [(group, opts) for group, opts in grouped.items()]
