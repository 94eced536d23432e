"""CPU time of a set of processes, from ``/proc``, less an idle rate.

``Meter(pids)`` follows the processes that ``pids()`` names at each
reading (a callable, so processes that start or end during a phase are
followed): ``read()`` is the CPU seconds (utime + stime of every thread,
``/proc/<pid>/stat``) that those processes have used, counting a process
that ended at its last reading. ``Phase`` measures one phase of a
scenario over several meters:

    phase = Phase({'server': server_meter, 'database': db_meter})
    phase.idle(2.0)            # the idle rate, just before the work
    phase.start()
    ops = do_the_work()
    phase.until_idle()         # until the server is idle again
    cpu = phase.stop()         # {'server': s, 'database': s}, idle less

``per_op_ms(cpu, ops)`` turns seconds into milliseconds per operation.
The process sets are chosen by the caller: ``process_tree(pid)`` (a
server and its descendants), ``postgres_backends(engine, database)``
(the PostgreSQL processes that serve one database, and the server's
background processes) and ``processes_named(names)`` (MariaDB's
``mariadbd``).
"""

import os
import time

import sqlalchemy as sa

_TICKS = os.sysconf('SC_CLK_TCK')
#: below this many cores above its idle rate, a server counts as idle
IDLE_MARGIN = 0.03


def parse_stat(text):
    """(ppid, CPU seconds) of one ``/proc/<pid>/stat`` line."""
    # the command name may hold spaces and parentheses: fields follow
    # the last ')'
    fields = text[text.rindex(')') + 2:].split()
    # fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS


def _stat(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return parse_stat(f.read())
    except (OSError, ValueError):
        return None


def cpu_seconds(pid):
    """CPU seconds ``pid`` used so far (None once it is gone)."""
    stat = _stat(pid)
    return None if stat is None else stat[1]


def _parents():
    out = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None:
                out[int(entry)] = stat[0]
    return out


def process_tree(root):
    """A callable naming ``root`` and all its descendants."""
    def pids():
        parents = _parents()
        tree, grew = {root}, True
        while grew:
            more = {p for p, parent in parents.items() if parent in tree}
            grew = bool(more - tree)
            tree |= more
        return tree
    return pids


def processes_named(names):
    """A callable naming the processes whose command is in ``names``."""
    def pids():
        out = set()
        for entry in filter(str.isdigit, os.listdir('/proc')):
            try:
                with open('/proc/%s/comm' % entry) as f:
                    if f.read().strip() in names:
                        out.add(int(entry))
            except OSError:
                continue
        return out
    return pids


def postgres_backends(engine, database):
    """A callable naming the PostgreSQL processes that serve ``database``
    and the server's own background processes (WAL writer, checkpointer,
    ...; no database); other databases' sessions are left out, so other
    users of the same server weigh on the figures only through the shared
    background processes. ``engine`` connects to another database (its
    own session is not counted)."""
    query = sa.text('SELECT pid FROM pg_stat_activity '
                    'WHERE datname = :name OR datname IS NULL')

    def pids():
        with engine.connect() as conn:
            return {row[0] for row in conn.execute(query,
                                                   {'name': database})}
    return pids


class Meter:
    """CPU seconds used by the processes ``pids()`` names over time."""

    def __init__(self, pids, read_cpu=cpu_seconds):
        self._pids = pids
        self._read_cpu = read_cpu
        self._last = {}

    def read(self):
        for pid in self._pids():
            used = self._read_cpu(pid)
            if used is not None:
                self._last[pid] = used
        return sum(self._last.values())


class Phase:
    """One measured phase over named meters, idle rates subtracted.

    ``idle`` is the meter whose rate says when the work is over.
    """

    def __init__(self, meters, idle='server', clock=time.monotonic,
                 sleep=time.sleep):
        self.meters = meters
        self.idle_key = idle
        self._clock, self._sleep = clock, sleep
        self.idle_rate = {name: 0.0 for name in meters}
        self._started = self._at = None

    def _read(self):
        return {name: m.read() for name, m in self.meters.items()}

    def idle(self, seconds):
        """Measure each meter's idle rate (cores) over ``seconds``."""
        before, t0 = self._read(), self._clock()
        self._sleep(seconds)
        after, elapsed = self._read(), self._clock() - t0
        self.idle_rate = {name: max(0.0, (after[name] - before[name])
                                    / elapsed) for name in self.meters}
        return self.idle_rate

    def start(self):
        self._started, self._at = self._read(), self._clock()

    def until_idle(self, interval=0.25, quiet=2, timeout=60.0):
        """Wait until the ``idle`` meter's rate stays within IDLE_MARGIN
        of its idle rate for ``quiet`` intervals in a row; seconds
        waited."""
        meter = self.meters[self.idle_key]
        limit = self.idle_rate[self.idle_key] + IDLE_MARGIN
        t0 = previous_at = self._clock()
        previous, calm = meter.read(), 0
        while calm < quiet and self._clock() - t0 < timeout:
            self._sleep(interval)
            used, now = meter.read(), self._clock()
            rate = (used - previous) / max(now - previous_at, 1e-6)
            calm = calm + 1 if rate <= limit else 0
            previous, previous_at = used, now
        return self._clock() - t0

    def stop(self):
        """CPU seconds per meter since ``start``, less the idle rate;
        the phase's wall seconds under ``'elapsed_s'``."""
        ended, elapsed = self._read(), self._clock() - self._at
        out = {name: max(0.0, ended[name] - self._started[name]
                         - self.idle_rate[name] * elapsed)
               for name in self.meters}
        out['elapsed_s'] = elapsed
        return out


def per_op_ms(seconds, ops):
    """Milliseconds per operation (None when nothing was counted)."""
    if seconds is None or not ops:
        return None
    return round(seconds * 1000.0 / ops, 3)
