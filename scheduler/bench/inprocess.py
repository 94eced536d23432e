"""The scheduler in this process, timed phase by phase (no RPC).

``TimedScheduler(manager).select(spec)`` calls the manager's
``select_destinations`` endpoint, as an RPC server would, and splits its
wall time into:

* ``refresh``: the host cache's incremental refresh (one DB query, more
  when rows changed);
* ``claim``: ``claims.claim_resources``, the claim transaction;
* ``decision``: everything else, i.e. the in-memory work of the driver:
  building the request state, filtering, weighing, picking, tentative
  claims and building the Selections.

The phases are timed by wrapping the cache's ``refresh`` (on this
instance) and ``scheduler.claims.claim_resources`` (for the duration of
the call); nothing of the scheduler's code is changed. If a future driver
stops calling the claim function through its module, ``claim_timed`` is
False and the claim is counted in ``decision``.
"""

import dataclasses
import time

import oslo_messaging

from scheduler import claims
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
        self.ctxt = RequestContext(project_id='bench', user_id='bench',
                                   roles=['service'])
        self._timing = None
        original = self.cache.refresh

        def refresh(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                if self._timing is not None:
                    self._timing.refresh += time.perf_counter() - started

        self.cache.refresh = refresh

    def cold_load(self):
        """Seconds the first (full) refresh takes."""
        started = time.perf_counter()
        self.cache.refresh(force=True)
        return time.perf_counter() - started

    def select(self, spec):
        """``(selections or None on NoValidHost, Timing)``."""
        timing = self._timing = Timing()
        original = claims.claim_resources

        def claim(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timing.claim += time.perf_counter() - started
                timing.claim_timed = True

        claims.claim_resources = claim
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
        finally:
            timing.total = time.perf_counter() - started
            claims.claim_resources = original
            self._timing = None
        return result, timing
