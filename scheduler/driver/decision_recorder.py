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
  ``reset()`` to start a new measurement;
* ``totals()``: what never leaves a window, for the metrics endpoint:
  per phase a histogram over ``BUCKETS`` (cumulative counts, sum,
  count), hosts removed per filter (``rejected(name, hosts)``, fed by
  the driver), RPC errors per (method, exception) (``rpc_error``, fed by
  the RPC edge) and the monotonic time of the last report absorbed.

Recording costs a few dict and deque operations per decision, under a
lock of its own.
"""

import bisect
import collections
import itertools
import threading
import time


WINDOW = 100000
# histogram upper bounds, seconds (a decision takes about a millisecond)
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
           0.5, 1.0, 2.5, 5.0, 10.0)
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
            self._buckets = {name: [0] * (len(BUCKETS) + 1)
                             for name in PHASES}
            self._sums = dict.fromkeys(PHASES, 0.0)
            self._rejected = collections.Counter()
            self._rpc_errors = collections.Counter()
            self._solver = collections.Counter()
            self._last_report = None

    def decision(self, timings, instances, conflicts=0, refused=False,
                 settle_waits=0):
        """Record one decision: ``timings`` maps phase -> seconds."""
        with self._lock:
            self._last = dict(self._last, **timings)
            for name, seconds in timings.items():
                self._phases[name].append(seconds)
                self._observe(name, seconds)
            self._counters['decisions'] += 1
            self._counters['instances'] += 0 if refused else instances
            self._counters['claim_conflicts'] += conflicts
            self._counters['no_valid_host'] += int(refused)
            self._counters['settle_waits'] += settle_waits

    def _observe(self, phase, seconds):
        buckets = self._buckets.setdefault(phase,
                                           [0] * (len(BUCKETS) + 1))
        buckets[bisect.bisect_left(BUCKETS, seconds)] += 1
        self._sums[phase] = self._sums.get(phase, 0.0) + seconds

    def reports(self, written, unchanged):
        with self._lock:
            self._counters['reports_written'] += written
            self._counters['reports_unchanged'] += unchanged
            self._last_report = time.monotonic()

    def rejected(self, filter_name, hosts):
        """``filter_name`` removed ``hosts`` hosts from a request's list."""
        with self._lock:
            self._rejected[filter_name] += hosts

    def rpc_error(self, method, exception_name):
        """A call of ``method`` was answered with ``exception_name``."""
        with self._lock:
            self._rpc_errors[method, exception_name] += 1

    def solver_outcome(self, outcome):
        """The solver driver placed a request (``outcome``: 'solved',
        'greedy', or why it fell back to the greedy plan)."""
        with self._lock:
            self._solver[outcome] += 1

    def totals(self):
        """Module docstring: histograms, rejections, RPC errors, the
        monotonic time of the last report (None before any)."""
        with self._lock:
            histograms = {}
            for name, buckets in self._buckets.items():
                cumulative = list(itertools.accumulate(buckets))
                histograms[name] = {
                    'buckets': list(zip(BUCKETS + (float('inf'),),
                                        cumulative)),
                    'sum': self._sums[name], 'count': cumulative[-1]}
            return {'histograms': histograms,
                    'rejected': dict(self._rejected),
                    'rpc_errors': dict(self._rpc_errors),
                    'solver': dict(self._solver),
                    'last_report': self._last_report}

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
