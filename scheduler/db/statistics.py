"""Planner statistics that keep up with a cloud's first reports (PostgreSQL).

PostgreSQL plans a statement from the statistics ANALYZE gathers. The
tables of a new database have none: the planner takes ``providers`` and
``inventories`` for small tables and scans them whole where an index
would reach a few rows. Measured here with 10k hosts reported into a new
database and no statistics gathered since: a busy poll of the host-state
poller (15 changed providers) cost 5.2 ms of the server's CPU instead of
1.1 ms (the inventories of the changed providers read by a scan of all
30k rows), and a batch of 15 tracker reports 10.0 ms instead of 4.5 ms.
Autovacuum gathers statistics once enough rows changed, within its
naptime, where it runs; a server with autovacuum off (seen on CI
servers) never does.

``after_growth(db)`` is the writers' part: called after a transaction
that inserted providers (``scheduler.db.providers``), it compares the
number of providers with the planner's estimate (``pg_class.reltuples``,
negative until the first ANALYZE) and analyzes ``providers`` and
``inventories`` when the table holds at least ``MIN_ROWS`` rows and more
than twice the estimate: about ten times while a cloud registers 10k
hosts (tens of ms each), never while hosts only report. Two workers may
both analyze at once; that is harmless. A failure is logged and never
fails the write, which has committed. MariaDB (InnoDB recalculates its
statistics itself when a tenth of a table changed) and SQLite (whose
planner prefers an index when it has no statistics) need nothing.
"""

from oslo_log import log as logging

from scheduler.db import models
from scheduler.db import outages

LOG = logging.getLogger(__name__)

#: below this many providers a scan costs next to nothing
MIN_ROWS = 100
_TABLES = '%s, %s' % (models.providers.name, models.inventories.name)
_ESTIMATE = ('SELECT reltuples, (SELECT count(*) FROM {0}) FROM pg_class '
             "WHERE oid = '{0}'::regclass").format(models.providers.name)
_ANALYZE = 'ANALYZE %s' % _TABLES


def stale(estimate, rows):
    """Do the planner's statistics (``estimate`` rows, negative: never
    gathered) fall short of a table of ``rows`` rows?"""
    return rows >= MIN_ROWS and rows > 2 * max(estimate, 0)


def after_growth(db):
    """Analyze the provider tables if they outgrew their statistics
    (PostgreSQL; module docstring). True if it analyzed them."""
    if not db.is_postgresql:
        return False
    try:
        with db.autocommit() as connection:
            estimate, rows = connection.exec_driver_sql(_ESTIMATE).one()
            if not stale(estimate, rows):
                return False
            connection.exec_driver_sql(_ANALYZE)
    except Exception as exc:   # the write committed: never fail it
        LOG.warning('Gathering planner statistics of %s failed (the '
                    'next new host tries again): %s', _TABLES,
                    outages.summary(exc))
        return False
    LOG.info('Gathered planner statistics of %s: %d providers, %d '
             'estimated before', _TABLES, rows, max(estimate, 0))
    return True
