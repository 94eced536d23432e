"""A broker outage, once per process: one line when it starts, one when it
ends, whatever the number of connections and reconnect attempts.

``Outage.went_away(detail)`` is True for the first failure of an outage
(its caller logs ``Message broker unreachable: <detail>``), False for the
ones after it (counted, not logged) and for the echoes of an outage that
ended less than ``SETTLE`` seconds ago (connections still in their retry
sleep, acknowledgements of messages read on a connection now closed).
``Outage.came_back()`` is, for the first connection back, the outage's
length and the number of lines not logged (its caller logs ``Message
broker reachable again after N s``), and None for the others.

``PROCESS`` is the process's one instance: the servers' consumer loops
report to it, and so do oslo.messaging's connections of the clients in
the same process (``scheduler.rpc.log_filters`` rewrites their records
through it).
"""

import threading
import time

#: seconds after an outage during which failures are its echoes
SETTLE = 10.0


class Outage:
    """See the module docstring."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._since = None       # start of the outage
        self._ended = None       # end of the last one
        self._dropped = 0

    def went_away(self, detail=None):
        with self._lock:
            now = self._clock()
            if self._since is not None:
                self._dropped += 1
                return False
            if self._ended is not None and now - self._ended < SETTLE:
                return False
            self._since = now
            return True

    def came_back(self):
        """(seconds the outage lasted, lines not logged), or None."""
        with self._lock:
            if self._since is None:
                return None      # another connection of the same return
            self._ended = self._clock()
            lasted = self._ended - self._since
            dropped, self._since, self._dropped = self._dropped, None, 0
            return lasted, dropped


PROCESS = Outage()

#: what the first line of an outage and the line of its end say
UNREACHABLE = ('Message broker unreachable: %s; reconnecting (nothing more '
               'is logged until it is back)')
REACHABLE = ('Message broker reachable again after %.1f s (%d lines about '
             'reconnect attempts were not logged)')
