"""Which hosts count as reporting, allowing for the scheduler being cut off.

A host is normally reporting when its last report is at most
``service_down_time`` seconds old. When the message broker (or this
worker's link to it) is down for longer than that, every tracker falls
silent at once, and on the broker's return the whole cloud would look down
until each tracker has reported again. Like kube's node lifecycle
controller in a disruption of a zone, a worker takes a silence of most
hosts at once as its own problem, not the hosts':

* when at least ``[scheduler] disruption_threshold`` (55% by default,
  kube's unhealthy-zone threshold) of the hosts, and at least
  ``MIN_SILENT`` hosts, are not reporting, the worker notes when that
  silence began (the newest report among the silent hosts) and, from
  then until ``service_down_time`` seconds after it last
  saw the silence, every host that was reporting when the silence began
  still counts as reporting: each tracker gets a full period to report
  again;
* a host that had stopped reporting before the silence is down as usual,
  and so is any host once the grace is over.

The cost: a disruption that really took most hosts down keeps them
schedulable for as long as it lasts (kube makes the same trade); claims
still hold, the build fails and is retried elsewhere.
"""

import threading

import numpy as np

# a tiny cloud whose hosts died is not a disruption of the scheduler
MIN_SILENT = 3


class DisruptionGrace:
    """Per worker: remembers the last silence it saw (thread-safe)."""

    def __init__(self, service_down_time, threshold):
        self.service_down_time = service_down_time
        self.threshold = threshold
        self._lock = threading.Lock()
        self.silent_from = None     # newest report when the silence began
        self.grace_until = None

    def reporting(self, reported_at, now):
        """Boolean mask over ``reported_at`` (seconds since the epoch)."""
        fresh = (now - reported_at) <= self.service_down_time
        count = len(reported_at)
        silent = None
        # the hosts not fresh bound the silent ones: nearly always too
        # few to look closer (a count of a mask costs no conversion)
        if self._too_many(count - int(np.count_nonzero(fresh)), count):
            silent = ~fresh & (reported_at > 0)     # 0: never reported
            if not self._too_many(int(np.count_nonzero(silent)), count):
                silent = None
        with self._lock:
            if silent is not None:
                newest_silent = float(reported_at[silent].max())
                if (self.grace_until is None or now > self.grace_until
                        or self.silent_from is None):
                    self.silent_from = newest_silent
                self.grace_until = now + self.service_down_time
            if self.grace_until is None or now > self.grace_until:
                return fresh
            silent_from = self.silent_from
        return fresh | (reported_at >= silent_from - self.service_down_time)

    def _too_many(self, silent_count, count):
        """Is a silence of ``silent_count`` hosts of ``count`` the
        scheduler's own (module docstring)?"""
        return (silent_count >= MIN_SILENT
                and silent_count >= self.threshold * count)
