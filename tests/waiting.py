"""One way for a test to wait for something to happen.

``wait_for(predicate, timeout, what)`` calls ``predicate`` until it
returns something truthy and returns that, or fails the test after
``timeout`` seconds naming ``what`` it waited for. A fixed
``time.sleep`` as synchronisation is a guess of how long the machine
takes (too short on a busy CI machine, too long everywhere else); a
sleep that remains in a test stands for time passing on purpose (a
deadline, a window, an idle period whose cost is measured).
"""

import time


def wait_for(predicate, timeout=20.0, what='a condition', interval=0.02):
    """See the module docstring."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError('timed out after %.0fs waiting for %s'
                                 % (timeout, what))
        time.sleep(interval)
