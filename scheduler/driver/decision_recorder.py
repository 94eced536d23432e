"""What the scheduler records of its own decisions.

``DecisionRecorder`` (one per worker; the driver's ``recorder``) records
every decision: the seconds spent in each phase (``refresh``, ``preload``,
``filter``, ``weigh``, ``claim``), claim conflicts, NoValidHost answers,
waits for the worker's own tentative claims to settle, and, fed by the
report writer and the host cache, reports absorbed (written or found
unchanged) and the refresh lag. Its read API, for ``scheduler-manage``,
the log or a bench:

* ``snapshot()``: counters and, per phase, count, total, p50, p99 and max
  over the last ``WINDOW`` decisions (a dict of plain numbers);
* ``phases(name)``: the recorded seconds of one phase (the last
  ``WINDOW``); ``last()``: the phases of the latest decision;
  ``reset()`` to start a new measurement.

Recording costs a few dict and deque operations per decision, under a
lock of its own.
"""

import collections
import threading


WINDOW = 100000
PHASES = ('refresh', 'preload', 'filter', 'weigh', 'claim', 'total')
COUNTERS = ('decisions', 'instances', 'claim_conflicts', 'no_valid_host',
            'settle_waits', 'reports_written', 'reports_unchanged')


class DecisionRecorder:
    """Per-decision phase timings and counters (module docstring)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self):
        with self._lock:
            self._phases = {name: collections.deque(maxlen=WINDOW)
                            for name in PHASES}
            self._counters = dict.fromkeys(COUNTERS, 0)
            self._refresh_lag = 0.0
            self._last = dict.fromkeys(PHASES, 0.0)

    def decision(self, timings, instances, conflicts=0, refused=False,
                 settle_waits=0):
        """Record one decision: ``timings`` maps phase -> seconds."""
        with self._lock:
            self._last = dict(self._last, **timings)
            for name, seconds in timings.items():
                self._phases[name].append(seconds)
            self._counters['decisions'] += 1
            self._counters['instances'] += 0 if refused else instances
            self._counters['claim_conflicts'] += conflicts
            self._counters['no_valid_host'] += int(refused)
            self._counters['settle_waits'] += settle_waits

    def reports(self, written, unchanged):
        with self._lock:
            self._counters['reports_written'] += written
            self._counters['reports_unchanged'] += unchanged

    def refresh_lag(self, seconds):
        """Age of the host view when a decision read it."""
        with self._lock:
            self._refresh_lag = max(self._refresh_lag, seconds)

    def last(self):
        with self._lock:
            return dict(self._last)

    def phases(self, name):
        with self._lock:
            return list(self._phases[name])

    def snapshot(self):
        with self._lock:
            result = dict(self._counters)
            result['max_refresh_lag_s'] = self._refresh_lag
            for name, values in self._phases.items():
                result[name] = _summary(sorted(values))
            return result


def _summary(ordered):
    if not ordered:
        return {'count': 0}

    def at(q):
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
    return {'count': len(ordered), 'total_s': sum(ordered),
            'p50_ms': at(0.50) * 1e3, 'p99_ms': at(0.99) * 1e3,
            'max_ms': ordered[-1] * 1e3}
