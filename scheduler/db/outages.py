"""Database outages: telling them from bugs, and logging them briefly.

``is_outage(exc)`` says whether ``exc`` is the database being away
(unreachable, restarting, dropped) rather than a bug: oslo.db's wrapped
connection errors, or what the driver raises through SQLAlchemy when a
connection is opened or lost. ``summary(exc)`` is the driver's one-line
message without the statement and parameters oslo.db appends, so an
outage can be logged without its SQL.

``OutageLog`` is for periodic tasks (the host-state poller, the claim
sweeper): an outage is one warning line when it begins and one line when
it ends, not a traceback per attempt::

    log = OutageLog(LOG, 'Claim sweep')
    try:
        sweep()
    except Exception as exc:
        if not is_outage(exc):
            raise
        log.failed(exc, retry_every=15)
    else:
        log.worked()

``RequestOutage`` is the same for the requests a worker serves, which
may be thousands during one outage: ``refused(exc, method)`` for each
request answered ``DatabaseUnavailable`` (the first logs one warning with
the driver's message), ``answered()`` for each request answered
normally (the first after an outage logs one line: how long it lasted
and how many requests were refused meanwhile). ``requests_of(endpoint)``
is the one of an RPC endpoint, shared by the dispatchers of its topics.
"""

import threading
import time
import weakref

from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc

from scheduler import exception

_OUTAGE = (db_exc.DBConnectionError, db_exc.CantStartEngineError,
           sa_exc.OperationalError, sa_exc.InterfaceError,
           sa_exc.DisconnectionError, sa_exc.TimeoutError)


def is_outage(exc):
    """Is ``exc`` the database being away, rather than a bug?"""
    inner = getattr(exc, 'inner_exception', None)
    return isinstance(exc, _OUTAGE) or isinstance(inner, _OUTAGE)


def summary(exc):
    """The driver's message, first line, without the SQL (200 chars)."""
    text = str(getattr(exc, 'inner_exception', None) or exc)
    text = text.split('[SQL:')[0].strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


class OutageLog:
    """One warning when a task's outage begins, one line when it ends."""

    def __init__(self, logger, task):
        self.logger = logger
        self.task = task
        self.failing = False

    def failed(self, exc, retry_every=None):
        """``retry_every``: seconds between the task's tries, None when
        something else (the broker's redelivery) tries again."""
        if not self.failing:
            retry = ('retrying every %gs' % retry_every
                     if retry_every is not None else 'retried as they come')
            self.logger.warning('%s failed, database unreachable; %s: %s',
                                self.task, retry, summary(exc))
        self.failing = True

    def worked(self):
        if self.failing:
            self.logger.info('%s works again', self.task)
        self.failing = False


#: the driver's message in the line that starts an outage (it may hold a
#: statement and its parameters)
DETAIL_LENGTH = 1000


class RequestOutage:
    """One line when requests start to fail, one when one works again."""

    def __init__(self, logger):
        self.logger = logger
        self._lock = threading.Lock()
        self._since = None
        self._refused = 0

    def refused(self, exc, method):
        """A request of ``method`` was answered DatabaseUnavailable."""
        with self._lock:
            self._refused += 1
            if self._since is not None:
                return
            self._since = time.monotonic()
        self.logger.warning(
            'Database unreachable (seen by %s): %s; requests are answered '
            'DatabaseUnavailable until it is back', method, exception.cut(
                str(exc).replace('\n', ' '), DETAIL_LENGTH))

    def answered(self):
        """A request was answered normally (every RPC method's normal
        answer went through the database)."""
        if self._since is None:     # the common case: no lock
            return
        with self._lock:
            if self._since is None:
                return
            lasted = time.monotonic() - self._since
            refused, self._since, self._refused = self._refused, None, 0
        self.logger.info('Database reachable again after %.1f s; %d '
                         'requests were answered DatabaseUnavailable '
                         'meanwhile', lasted, refused)

    @property
    def ongoing(self):
        return self._since is not None


_OF_ENDPOINT = weakref.WeakKeyDictionary()
_OF_ENDPOINT_LOCK = threading.Lock()


def requests_of(endpoint, logger):
    """The ``RequestOutage`` of ``endpoint`` (created at first use)."""
    with _OF_ENDPOINT_LOCK:
        outage = _OF_ENDPOINT.get(endpoint)
        if outage is None:
            outage = _OF_ENDPOINT[endpoint] = RequestOutage(logger)
        return outage
