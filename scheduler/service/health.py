"""What a worker's ``GET /healthcheck`` says: ``Health(conf, endpoint)``.

``problems()`` lists what is wrong, one short phrase each, none when the
worker can serve:

* ``database unreachable: <why>``: a ``SELECT 1`` failed;
* the broker check's line (``message broker unreachable at <url>: <why>``,
  or ``Invalid configuration: message broker ...`` for credentials or a
  virtual host the broker refuses): ``BrokerCheck``, start-up's own check
  (``scheduler.service.startup_checks.check_broker``) with one attempt;
  its answer is kept ``BROKER_CHECK_INTERVAL`` seconds, so probes every
  second open one short connection per interval, not one per probe;
* ``host table not loaded``: the worker has not read the providers yet
  (a report worker keeps no table and skips this and the next);
* ``no report for N s``: the newest report in the table is older than
  ``[scheduler] service_down_time`` (trackers, or the report path, are
  silent), or ``no host has reported`` when the table is empty.

``hosts()`` is ``(known, up, down)``: rows of the table, and whether
their last report is at most ``service_down_time`` old (the metrics
endpoint's gauges).
"""

import threading
import time

import sqlalchemy
from oslo_db import exception as db_exc

from scheduler import exception
from scheduler.service import startup_checks

# what a database that cannot answer raises, through oslo.db or raw
_DATABASE_FAULTS = (db_exc.DBError, sqlalchemy.exc.SQLAlchemyError)
# seconds a broker check's answer stands; a probe asks again after that
BROKER_CHECK_INTERVAL = 30.0


class _OneAttempt:
    """``conf`` as start-up's broker check reads it, without its retries:
    a probe wants the answer of now, not in ``startup_retries`` times
    ``startup_retry_interval`` seconds."""

    startup_retries = 0

    def __init__(self, conf):
        self._conf = conf

    def __getattr__(self, name):
        return getattr(self._conf, name)


class BrokerCheck:
    """``problem()``: None when a broker host of ``transport_url`` took a
    login at the last check, else one line; asks again once the answer
    is ``BROKER_CHECK_INTERVAL`` seconds old. A transport that is not AMQP
    (the in-memory one) has no broker to ask: always None."""

    def __init__(self, conf, clock=time.monotonic, probe=None):
        self._probe = probe or (
            lambda: startup_checks.check_broker(_OneAttempt(conf)))
        self._clock = clock
        self._lock = threading.Lock()  # concurrent probes ask once
        self._asked_at = None
        self._problem = None

    def problem(self):
        with self._lock:
            if (self._asked_at is None or self._clock() - self._asked_at
                    >= BROKER_CHECK_INTERVAL):
                self._problem = self._ask()
                self._asked_at = self._clock()
            return self._problem

    def _ask(self):
        try:
            self._probe()
        except exception.SchedulerException as exc:
            return str(exc).strip().splitlines()[0]
        except Exception as exc:  # a probe must answer, not raise
            return 'message broker check failed: %s' % (
                startup_checks.describe_error(exc))
        return None


class Health:

    def __init__(self, conf, endpoint, clock=time.time, broker=None):
        self.conf = conf
        self.db = endpoint.db
        self.cache = getattr(endpoint, 'host_cache', None)
        self._clock = clock
        self.broker = broker or BrokerCheck(conf)

    def problems(self):
        found = [problem for problem in (self._database(),
                                         self.broker.problem()) if problem]
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

    def _database(self):
        try:
            with self.db.reader() as session:
                session.execute(sqlalchemy.text('SELECT 1'))
        except _DATABASE_FAULTS as exc:
            return 'database unreachable: %s' % (
                str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return None

    def hosts(self):
        if self.cache is None or self.cache.position is None:
            return None
        table = self.cache.table
        ages = self._clock() - table.reported_at[:table.size]
        up = int((ages <= self.conf.scheduler.service_down_time).sum())
        return table.size, up, table.size - up
