"""The in-process broker of the simulator and unit tests, polled, not spun.

``broker.EMBEDDED_URL`` is kombu's in-memory transport, which the servers
(``scheduler.transport``) and oslo.messaging's rabbit driver (the clients) both
reach. For a ``memory://`` URL, oslo.messaging's rabbit driver sets the
transport's polling interval to 0 (a kludge to speed up its own tests): every
consumer thread (two per worker, one per client's reply queue) then spins
between ``get`` and ``sleep(0)`` whenever its queue is empty, and the spinning
threads take the interpreter lock from the ones doing the work. In
``scheduler-sim`` that was a third of the process's CPU time and made every
claim hold SQLite's write lock longer (doc/source/performance-history.rst,
"Tail").

This transport is kombu's in-memory one (same global state, so both
names reach the same queues) under its own alias, which the kludge does
not match: an empty poll sleeps ``POLL_INTERVAL``, the most a message
waits for its consumer to look again.
"""

from kombu import transport
from kombu.transport import memory

ALIAS = 'scheduler-memory'

# seconds between two polls of an empty queue
POLL_INTERVAL = 0.001


class Transport(memory.Transport):
    """kombu's in-memory transport, polled every ``POLL_INTERVAL``."""

    polling_interval = POLL_INTERVAL
    driver_name = ALIAS


def register():
    """Make ``ALIAS`` a kombu transport name (idempotent)."""
    transport.TRANSPORT_ALIASES.setdefault(ALIAS, __name__ + ':Transport')
