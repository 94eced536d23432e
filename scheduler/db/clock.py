"""One clock for every worker of every host: the database server's.

Workers on several hosts compare times written by one another: the send
time a cast is ordered by is clamped to "now" when the sender's clock is
ahead (``scheduler.db.send_order``). With each worker's own clock as
"now", a worker whose clock runs behind clamps a message into its past,
below the stamp a correct worker gave the message before it, and the
later message loses (a tracker's report acknowledged, then ignored as
older). With one clock, what a worker clamps to is the time it handled
the message on that clock, which never goes below what an earlier
handled message was stamped with: order is kept whatever the workers'
own clocks say.

``DatabaseClock(engine).now()`` is the database server's UTC time
(naive, like every timestamp in the database), without a round trip per
call: the clock reads the server's time once (``refresh``, then at most
every ``REFRESH`` seconds, at the next ``now()``) and adds the time
passed since on this process's monotonic clock, so neither this host's
wall clock nor a step of it enters::

    clock = DatabaseClock(db.engine)
    clock.now()          # datetime.datetime(2026, 11, 29, 6, 41, 3, ...)

Its error is half the round trip of the read (the read is taken as made
halfway), plus the monotonic clock's drift since (parts per million).
While the database cannot be read, the last reading goes on; before any
reading, the host's own clock stands in (a warning is logged once).
On SQLite the database is a file of this host: its clock is the host's.

Thread-safe; a read races no one (two threads refreshing at once both
read, the later reading wins).
"""

import datetime
import time

import sqlalchemy as sa
from oslo_log import log as logging
from oslo_utils import timeutils

LOG = logging.getLogger(__name__)

#: seconds between two readings of the server's clock
REFRESH = 60.0
#: seconds the clocks of two hosts may differ (doc/source/admin/
#: production.rst, "Clocks"); ``skew_warning`` names a host further off
ALLOWED_SKEW = 5.0
#: seconds a reading may be off itself (half a round trip, drift since):
#: a host exactly ``ALLOWED_SKEW`` off is not named for it
READING_ERROR = 0.5

#: the server's UTC time, per SQLAlchemy dialect name
_UTC_NOW = {
    'postgresql': "SELECT clock_timestamp() AT TIME ZONE 'UTC'",
    'mysql': 'SELECT UTC_TIMESTAMP(6)',
    'mariadb': 'SELECT UTC_TIMESTAMP(6)',
}


class DatabaseClock:

    def __init__(self, engine, refresh=REFRESH):
        self.engine = engine
        self.refresh_every = refresh
        self._reading = None        # (server time, monotonic time)
        self._local = engine.dialect.name not in _UTC_NOW
        self._warned = False

    def now(self):
        """The database server's UTC time now (naive datetime)."""
        if self._local:
            return timeutils.utcnow()
        reading = self._reading
        if reading is None or (time.monotonic() - reading[1]
                               > self.refresh_every):
            reading = self.refresh() or reading
        if reading is None:
            return timeutils.utcnow()
        server, at = reading
        return server + datetime.timedelta(seconds=time.monotonic() - at)

    def refresh(self):
        """Read the server's clock; the reading, or None if it failed."""
        try:
            with self.engine.connect() as connection:
                before = time.monotonic()
                server = connection.execute(
                    sa.text(_UTC_NOW[self.engine.dialect.name])).scalar()
                after = time.monotonic()
        except Exception as exc:  # the database's outage is not ours
            if not self._warned:
                LOG.warning('Database clock not read (%s); going on with '
                            'the last reading or this host\'s clock', exc)
                self._warned = True
            return None
        self._warned = False
        self._reading = (_naive(server), (before + after) / 2)
        return self._reading

    def offset(self):
        """Seconds the server's clock is ahead of this host's (negative:
        behind), as last read; None before a reading."""
        if self._local or self._reading is None:
            return None
        return (self.now() - timeutils.utcnow()).total_seconds()


def skew_warning(offset, allowed=ALLOWED_SKEW):
    """What to tell the operator of a host whose clock is ``offset``
    seconds behind the database's (``DatabaseClock.offset()``; negative:
    ahead), or None while it is within ``allowed`` seconds (and the
    reading's own error)."""
    if offset is None or abs(offset) <= allowed + READING_ERROR:
        return None
    return ('This host\'s clock is %.1f s %s the database server\'s, more '
            'than the %.0f s the scheduler allows between hosts: '
            'synchronize it (NTP; doc/source/admin/production.rst, '
            '"Clocks")' % (abs(offset), 'behind' if offset > 0
                           else 'ahead of', allowed))


def _naive(stamp):
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return stamp
