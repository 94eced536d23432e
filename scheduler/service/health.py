"""What a worker's ``GET /healthcheck`` says: ``Health(conf, endpoint)``.

``problems()`` lists what is wrong, one short phrase each, none when the
worker can serve:

* ``database unreachable: <why>``: a ``SELECT 1`` failed;
* ``host table not loaded``: the worker has not read the providers yet
  (a report worker keeps no table and skips this and the next);
* ``no report for N s``: the newest report in the table is older than
  ``[scheduler] service_down_time`` (trackers, or the report path, are
  silent), or ``no host has reported`` when the table is empty.

``hosts()`` is ``(known, up, down)``: rows of the table, and whether
their last report is at most ``service_down_time`` old (the metrics
endpoint's gauges). The broker is not probed here: the worker's
transport reconnects by itself and offers no state to read.
"""

import time

import sqlalchemy
from oslo_db import exception as db_exc

# what a database that cannot answer raises, through oslo.db or raw
_DATABASE_FAULTS = (db_exc.DBError, sqlalchemy.exc.SQLAlchemyError)


class Health:

    def __init__(self, conf, endpoint, clock=time.time):
        self.conf = conf
        self.db = endpoint.db
        self.cache = getattr(endpoint, 'host_cache', None)
        self._clock = clock

    def problems(self):
        found = []
        try:
            with self.db.reader() as session:
                session.execute(sqlalchemy.text('SELECT 1'))
        except _DATABASE_FAULTS as exc:
            found.append('database unreachable: %s' % (
                str(exc).strip().splitlines() or [type(exc).__name__])[0])
        if self.cache is None:
            return found
        if self.cache.position is None:
            return found + ['host table not loaded']
        table = self.cache.table
        if not table.size:
            return found + ['no host has reported']
        age = self._clock() - float(table.reported_at[:table.size].max())
        if age > self.conf.scheduler.service_down_time:
            found.append('no report for %d s' % age)
        return found

    def hosts(self):
        if self.cache is None or self.cache.position is None:
            return None
        table = self.cache.table
        ages = self._clock() - table.reported_at[:table.size]
        up = int((ages <= self.conf.scheduler.service_down_time).sum())
        return table.size, up, table.size - up
