"""Conductors under load for the fault tests, and the audit afterwards.

``Load(server, threads)`` places one tiny instance per call from
``threads`` threads, each call with a fresh instance uuid, until
``stop()``; every answer is recorded with its time::

    with fault_load.Load(server, threads=4) as load:
        time.sleep(2)
        fault()                         # restart a database, kill a worker
        mark = time.monotonic()
        time.sleep(5)
    load.counts()        # {'placed': 310, 'DatabaseUnavailable': 12}
    load.unexpected()                   # answers that are no clear answer
    load.first_success_after(mark)      # seconds until placements flowed
    load.longest_stall()                # longest time without a placement
    load.waits_after(mark)              # how long each placement took

``Load(server, threads, timeout=4)``: callers that give up after 4 s.
``retry_same=True``: callers that keep the client's contract after an
answer that says "retry" (``SchedulerUnavailable``,
``DatabaseUnavailable``, ``ServiceUnavailable``): they ask again for the
same instance uuid, as a conductor retries a build, and on ``stop()`` a
caller still without an answer gives the build up with
``delete_allocations``. A claim written for a call whose answer never
reached its caller is then answered to the retry (held claims), never
left behind.

``audit(server, load)`` returns the problems the database shows: any
overcommit, any claim whose caller was not told it was placed (an orphan),
any placement the caller was told of but that has no claim.
``audit_line(server, load, reports, back)`` prints the same audit as
figures, one line for the fault table::

    calls 1210 (ok 1190, expected error 20, lost 0); longest wait 4.1 s;
    longest stall 4.1 s; overcommit 0; orphan claims 0; placements
    without claim 0; reports sent 1000, lost 0; serving again after 2.3 s
"""

import collections
import threading
import time
import uuid

from scheduler import exception
from tests.functional import db_state
from tests.functional import tracker
from tests.functional import workload

TINY = {'vcpus': 1, 'memory_mb': 64, 'root_gb': 1}
# hosts of a fault test: about 36 TINY instances fit on each, far more in
# all than a test places (720, the capacity of 20 hosts, was reached within
# one fault test once placements got faster), so that a NoValidHost can
# only come from the fault, and placements after it are always possible
HOSTS = 80
# answers a caller can act on: placed, nothing fits, retry later
EXPECTED = ('placed', 'NoValidHost', 'DatabaseUnavailable',
            'ServiceUnavailable', 'SchedulerUnavailable')
# of those, the answers after which a caller asks again
RETRY = EXPECTED[2:]


class Load:

    def __init__(self, server, threads=4, timeout=None, retry_same=False):
        self.server = server
        self.client = server.client()
        if timeout is not None:
            # callers that wait ``timeout`` seconds at most for an answer
            api = self.client.api
            api.client = api.client.prepare(timeout=timeout)
        self.threads = [threading.Thread(target=self._run, daemon=True)
                        for _ in range(threads)]
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.answers = []           # (monotonic time, kind, detail, uuid)
        self.longest_wait = 0.0     # seconds, of any call
        self.waits = []             # (monotonic time, seconds, kind)
        self.timeout = timeout
        self.retry_same = retry_same
        self.abandoned = []         # uuids given up with delete_allocations

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(120)

    def _run(self):
        ctxt = workload.context()
        kind = consumer = None
        while not self.stopping.is_set():
            if not (self.retry_same and kind in RETRY):
                consumer = str(uuid.uuid4())
            spec = workload.object_spec(TINY, instance_uuids=[consumer])
            started = time.monotonic()
            try:
                self.client.select_destinations(ctxt, spec,
                                                instance_uuids=[consumer])
                kind, detail = 'placed', ''
            except exception.SchedulerException as exc:
                kind = type(exc).__name__.replace('_Remote', '')
                detail = str(exc).splitlines()[0]
            except Exception as exc:  # what a fault must never produce
                kind = 'unexpected ' + type(exc).__name__
                detail = str(exc).splitlines()[0] if str(exc) else ''
            with self.lock:
                self.answers.append((time.monotonic(), kind, detail,
                                     consumer))
                waited = time.monotonic() - started
                self.waits.append((time.monotonic(), waited, kind))
                self.longest_wait = max(self.longest_wait, waited)
            if kind != 'placed':
                time.sleep(0.05)
        if self.retry_same and kind in RETRY:
            self.client.delete_allocations(ctxt, consumer)
            with self.lock:
                self.abandoned.append(consumer)

    def counts(self):
        return dict(collections.Counter(a[1] for a in self.answers))

    def unexpected(self):
        return [(kind, detail) for _, kind, detail, _ in self.answers
                if kind not in EXPECTED]

    def retries(self):
        """Calls that asked again for an instance already asked for."""
        return len(self.answers) - len({a[3] for a in self.answers})

    def placed(self):
        return {a[3] for a in self.answers if a[1] == 'placed'}

    def longest_stall(self):
        """The longest time, in seconds, without a placement answered
        (from the first placement to the last answer)."""
        times = sorted(a[0] for a in self.answers if a[1] == 'placed')
        if not times:
            return None
        end = max(a[0] for a in self.answers)
        return max(b - a for a, b in zip(times, times[1:] + [end]))

    def waits_after(self, mark):
        """Seconds each placement answered after ``mark`` waited."""
        return [waited for at, waited, kind in self.waits
                if kind == 'placed' and at >= mark]

    def first_success_after(self, mark):
        times = [a[0] for a in self.answers
                 if a[1] == 'placed' and a[0] >= mark]
        return (min(times) - mark) if times else None


class Reports:
    """A tracker in a process of its own reporting ``count`` new hosts
    (``prefix``) while a fault lasts: ``start()``, ``join()``, then
    ``stored()`` waits (30 s at most) until the database holds every one
    of them and returns how many it holds. A report is acknowledged only
    once it is written, so none may be lost whatever the fault.
    ``per_second``: the tracker's pace (a cloud's trackers report
    spread over time), rather than all at once."""

    def __init__(self, server, count, prefix='during-fault',
                 per_second=None):
        self.server = server
        self.count = count
        self.before = db_state.provider_count(server.engine)
        self._thread = threading.Thread(
            target=tracker.push_stats,
            args=(server, workload.host_reports(count, prefix=prefix),
                  per_second))

    def start(self):
        self._thread.start()

    def join(self):
        self._thread.join()

    def stored(self):
        def count():
            return db_state.provider_count(self.server.engine) - self.before
        db_state.wait_for(lambda: count() == self.count, 30,
                          'every report stored')
        return count()


def held(server, reports, seconds=30):
    """How many of ``reports``' hosts the database holds once they
    stop arriving (or after ``seconds``), without failing the test."""
    deadline = time.monotonic() + seconds
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        count = db_state.provider_count(server.engine) - reports.before
        if count == reports.count:
            return count
        if count != last:
            last, since = count, time.monotonic()
        elif time.monotonic() - since > 10:
            break
        time.sleep(0.2)
    return db_state.provider_count(server.engine) - reports.before


def audit_line(server, load, reports=None, back=None):
    """The audit as figures (module docstring): calls answered, ok or
    an expected error, or lost (no answer a caller can act on: a
    timeout); the longest wait; the longest time without a placement;
    overcommitted resources; claims whose
    caller was not told; placements without a claim; reports sent and
    lost (``reports``: a started and joined ``Reports``); seconds until
    placements flowed again (``back``)."""
    counts = load.counts()
    ok = counts.get('placed', 0)
    lost = len(load.unexpected())
    overcommit = db_state.overcommit(db_state.read_state(server.engine))
    claimed = {row['consumer_uuid']
               for row in db_state.allocations(server.engine)}
    placed = load.placed()
    stall = load.longest_stall()
    line = ('calls %d (ok %d, expected error %d, lost %d); longest wait '
            '%.1f s; longest stall %s s; overcommit %d; orphan claims %d; '
            'placements without claim %d' % (
                sum(counts.values()), ok, sum(counts.values()) - ok - lost,
                lost, load.longest_wait,
                'n/a' if stall is None else '%.1f' % stall,
                len(overcommit), len(claimed - placed),
                len(placed - claimed)))
    if reports is not None:
        line += '; reports sent %d, lost %d' % (
            reports.count, reports.count - held(server, reports))
    if back is not None:
        line += '; serving again after %.1f s' % back
    return line


def audit(server, load):
    problems = db_state.overcommit(db_state.read_state(server.engine))
    claimed = {row['consumer_uuid']
               for row in db_state.allocations(server.engine)}
    placed = load.placed()
    orphans = claimed - placed
    lost = placed - claimed
    if orphans:
        problems.append('%d claims whose caller was not told: %s' % (
            len(orphans), sorted(orphans)[:3]))
    if lost:
        problems.append('%d placements without a claim: %s' % (
            len(lost), sorted(lost)[:3]))
    return problems
