"""The ``fill`` driver comparison's requests, one at a time or in
windows.

``Submitter(scheduler, requests=1)``: ``submit(specs)`` answers one
``(selections or None, seconds)`` per spec. With one request at a time
it calls the scheduler in this thread, and the seconds are the
driver's decision (``TimedScheduler``: no refresh, no claim). With
``requests`` > 1 (the solver with ``[solver] batch_window_ms``), the
specs are sent together from as many threads, as conductors calling at
the same moment would, so that they reach the worker within one window;
the seconds are then each whole call, its wait for the window and its
claim included (the driver's own phase split is per worker, not per
thread).
"""

from concurrent import futures


class Submitter:

    def __init__(self, scheduler, requests=1):
        self.scheduler = scheduler
        self.requests = requests
        self._pool = (futures.ThreadPoolExecutor(requests)
                      if requests > 1 else None)

    def submit(self, specs):
        if self._pool is None:
            return [self._one(spec) for spec in specs]
        return list(self._pool.map(self._whole_call, specs))

    def _one(self, spec):
        selections, timing = self.scheduler.select(spec)
        return selections, timing.decision

    def _whole_call(self, spec):
        selections, timing = self.scheduler.select(spec)
        return selections, timing.total

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
