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
"""

from oslo_db import exception as db_exc
from sqlalchemy import exc as sa_exc

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

    def failed(self, exc, retry_every):
        if not self.failing:
            self.logger.warning('%s failed, database unreachable; retrying '
                                'every %gs: %s', self.task, retry_every,
                                summary(exc))
        self.failing = True

    def worked(self):
        if self.failing:
            self.logger.info('%s works again', self.task)
        self.failing = False
