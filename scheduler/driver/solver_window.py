"""Windowed batches of the solver driver: the requests that reach one
worker within ``[solver] batch_window_ms`` placed by one model.

Off by default (``batch_window_ms = 0``). When on, the first request to
arrive opens a window and leads it: it waits the window out, then plans
every request that joined it at once (``SolverScheduler._plan_window``:
one refresh, each request's preload, filters and weighers as usual,
then ``solver_model.solve_window``, which places first the most
instances, whole requests only, then by the weighers). Each request is
then decided in its own thread as without a window, with the window's
answer as a *hint*: its instances go to the hosts the hint names if
they still pass its filters, fit and its group allows them, and are
claimed by the usual claim transaction, all or nothing per request.
A request the window left out, a hint that no longer holds, a claim
conflict (the re-plan has no hint) or a window model without a proven
optimum within ``time_budget_ms``: the request is planned alone, as
with no window.

    window = Window(0.02, planner)      # planner(specs) -> hints
    hint = window.join(spec)            # blocks until its window closes
"""

import threading
import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


class _Batch:

    def __init__(self):
        self.specs = []
        self.hints = None
        self.done = threading.Event()


class Window:
    """Gathers the requests that arrive within ``seconds`` of the first;
    ``planner(specs)`` answers one hint per spec (None: no hint)."""

    def __init__(self, seconds, planner, sleep=time.sleep):
        self.seconds = seconds
        self.planner = planner
        self._sleep = sleep
        self._lock = threading.Lock()
        self._open = None
        self.sizes = []     # requests per window closed, for the bench

    def join(self, spec):
        """The hint of ``spec`` once its window is planned."""
        with self._lock:
            batch = self._open
            leader = batch is None
            if leader:
                batch = self._open = _Batch()
            index = len(batch.specs)
            batch.specs.append(spec)
        if not leader:
            batch.done.wait()
            return batch.hints[index]
        self._sleep(self.seconds)
        with self._lock:
            self._open = None
        try:
            batch.hints = (self.planner(batch.specs)
                           if len(batch.specs) > 1 else [None])
        except Exception:
            # a window that cannot be planned leaves each request alone
            LOG.exception('Solver: a window of %d requests could not be '
                          'planned; planning them one by one',
                          len(batch.specs))
            batch.hints = [None] * len(batch.specs)
        finally:
            if batch.hints is None:
                batch.hints = [None] * len(batch.specs)
            self.sizes.append(len(batch.specs))
            batch.done.set()
        return batch.hints[index]
