"""The scheduler in this process, timed phase by phase (no RPC).

``TimedScheduler(manager).select(spec)`` calls the manager's
``select_destinations`` endpoint, as an RPC server would, and reads the
phases of that decision from what the driver itself records
(``manager.recorder``, a
``scheduler.driver.decision_recorder.DecisionRecorder``):

* ``refresh``: the host cache's incremental refresh (none when a poller
  thread refreshes, ``[scheduler] refresh_interval`` > 0);
* ``claim``: the claim transaction;
* ``decision``: everything else: request state, filters, weighers, pick,
  tentative claims and the Selections.

Nothing of the scheduler is patched: the figures are the product's own.
"""

import dataclasses
import time

import oslo_messaging

from scheduler import exception
from scheduler.context import RequestContext


@dataclasses.dataclass
class Timing:
    total: float = 0.0
    refresh: float = 0.0
    claim: float = 0.0
    claim_timed: bool = False

    @property
    def decision(self):
        return max(self.total - self.refresh - self.claim, 0.0)


class TimedScheduler:

    def __init__(self, manager):
        self.manager = manager
        self.cache = manager.host_cache
        self.recorder = manager.recorder
        self.ctxt = RequestContext(project_id='bench', user_id='bench',
                                   roles=['service'])

    def cold_load(self):
        """Seconds the first (full) refresh takes."""
        started = time.perf_counter()
        self.cache.refresh(force=True)
        return time.perf_counter() - started

    def select(self, spec):
        """``(selections or None on NoValidHost, Timing)``."""
        started = time.perf_counter()
        try:
            result = self.manager.select_destinations(self.ctxt, spec)
        except oslo_messaging.ExpectedException as wrapped:
            # the endpoint marks answers like NoValidHost for the RPC layer
            if not isinstance(wrapped.exc_info[1], exception.NoValidHost):
                raise wrapped.exc_info[1]
            result = None
        except exception.NoValidHost:
            result = None
        total = time.perf_counter() - started
        phases = self.recorder.last()
        return result, Timing(total=total, refresh=phases['refresh'],
                              claim=phases['claim'], claim_timed=True)
