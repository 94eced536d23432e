"""Service records: which scheduler workers run, what they run, are they up.

Each ``scheduler-server`` worker calls ``start_heartbeat(conf, db, index)``
once when it starts serving: that writes the one row of its (host, worker
index), a restarted worker updating the row its predecessor left (pid,
release, RPC and object versions, start time), and a daemon thread stamps
``heartbeat_at`` every ``[DEFAULT] heartbeat_interval`` seconds. A worker
is *up* while its last heartbeat is younger than ``[DEFAULT]
worker_down_time``; ``list_services`` says which are. A worker that stops
cleanly calls ``stop()`` on what ``start_heartbeat`` returned: its row's
pid becomes ``STOPPED`` (0) and it reads down at once.
``purge_services`` deletes rows of workers down for longer than a given
age (``scheduler-manage db purge``).

Times are naive UTC, like every other timestamp in the database. Workers
of release 0.1 keep no record (they predate this table). A heartbeat also
looks at this host's clock: while it is further from the database
server's than the scheduler allows (``scheduler.db.clock.ALLOWED_SKEW``),
the worker logs one warning.
"""

import datetime
import json
import os
import threading

import sqlalchemy as sa
from oslo_log import log as logging

from scheduler import objects
from scheduler import version
from scheduler.db import clock as db_clock
from scheduler.db import models
from scheduler.db import types

LOG = logging.getLogger(__name__)

SERVICES = sa.Table(
    'services', models.metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('host', sa.String(255), nullable=False),
    sa.Column('binary', sa.String(64), nullable=False),
    sa.Column('pid', sa.Integer, nullable=False),
    sa.Column('worker', sa.Integer, nullable=False),
    sa.Column('release', sa.String(64), nullable=False),
    sa.Column('rpc_version', sa.String(16), nullable=False),
    sa.Column('object_versions', types.LongText, nullable=False),
    sa.Column('started_at', types.Timestamp, nullable=False),
    sa.Column('heartbeat_at', types.Timestamp, nullable=False),
)
BINARY = 'scheduler-server'


def now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def object_versions():
    """{object name: version} of every registered object."""
    registry = objects.base.SchedulerObjectRegistry.obj_classes()
    return {name: classes[0].VERSION
            for name, classes in sorted(registry.items())
            if issubclass(classes[0], objects.base.SchedulerObject)}


#: the pid of a worker that stopped cleanly: its record reads down
STOPPED = 0


def register(db, host, worker, at=None):
    """Write this process's record, the one row of (host, worker): the
    newest row a previous process left is updated, older ones (written
    before rows were reused) deleted. Returns its id."""
    at = at or now()
    values = dict(
        pid=os.getpid(), release=version.release(),
        rpc_version=version.RPC_API_VERSION,
        object_versions=json.dumps(object_versions(), sort_keys=True),
        started_at=at, heartbeat_at=at)
    mine = sa.and_(SERVICES.c.host == host, SERVICES.c.binary == BINARY,
                   SERVICES.c.worker == worker)
    with db.writer() as session:
        ids = session.execute(sa.select(SERVICES.c.id).where(mine).order_by(
            SERVICES.c.id.desc())).scalars().all()
        if not ids:
            return session.execute(sa.insert(SERVICES).values(
                host=host, binary=BINARY, worker=worker, **values)
            ).inserted_primary_key[0]
        session.execute(sa.update(SERVICES).where(
            SERVICES.c.id == ids[0]).values(**values))
        if ids[1:]:
            session.execute(sa.delete(SERVICES).where(
                SERVICES.c.id.in_(ids[1:])))
        return ids[0]


def mark_stopped(db, service_id, at=None):
    """The record ``service_id`` reads down from now on (a clean stop)."""
    with db.writer() as session:
        session.execute(sa.update(SERVICES).where(
            SERVICES.c.id == service_id).values(
                pid=STOPPED, heartbeat_at=at or now()))


def beat(db, service_id, at=None):
    with db.writer() as session:
        session.execute(sa.update(SERVICES).where(
            SERVICES.c.id == service_id).values(heartbeat_at=at or now()))


def list_services(db, down_time, at=None, live_only=False):
    """Every record, oldest first, each a dict with ``up`` (bool)."""
    limit = (at or now()) - datetime.timedelta(seconds=down_time)
    with db.reader() as session:
        rows = session.execute(sa.select(SERVICES).order_by(
            SERVICES.c.host, SERVICES.c.started_at, SERVICES.c.id)).all()
    services = []
    for row in rows:
        item = dict(row._mapping)
        item['object_versions'] = json.loads(item['object_versions'])
        item['up'] = (item['heartbeat_at'] >= limit
                      and item['pid'] != STOPPED)
        if item['up'] or not live_only:
            services.append(item)
    return services


def purge_services(db, older_than, at=None):
    """Delete records whose last heartbeat is older than ``older_than``
    (a timedelta); returns how many."""
    limit = (at or now()) - older_than
    with db.writer() as session:
        return session.execute(sa.delete(SERVICES).where(
            SERVICES.c.heartbeat_at < limit)).rowcount


class Heartbeat:
    """A worker's record kept fresh by a daemon thread (``start_heartbeat``).
    A database error is logged and retried at the next beat: a worker
    never stops serving because its record could not be written."""

    def __init__(self, conf, db, worker):
        self.conf, self.db, self.worker = conf, db, worker
        self.service_id = None
        self.stopped = threading.Event()
        self._lock = threading.Lock()
        self._clock_warned = False

    def _tick(self):
        with self._lock:
            if self.stopped.is_set():
                return
            try:
                if self.service_id is None:
                    self.service_id = register(self.db, self.conf.host,
                                               self.worker)
                else:
                    beat(self.db, self.service_id)
            except Exception as exc:  # keep serving; the record can wait
                LOG.warning('Service record not written: %s', exc)
                return
            self._check_clock()

    def _check_clock(self):
        """Warn once while this host's clock is further from the
        database's than the scheduler allows (``scheduler.db.clock``)."""
        clock = self.db.clock
        clock.now()                     # a fresh reading when due
        warning = db_clock.skew_warning(clock.offset())
        if warning and not self._clock_warned:
            LOG.warning(warning)
        self._clock_warned = warning is not None

    def _loop(self):
        self._tick()
        while not self.stopped.wait(self.conf.heartbeat_interval):
            self._tick()

    def stop(self):
        """No more beats; the record reads down at once (a clean stop)."""
        with self._lock:
            self.stopped.set()
            if self.service_id is None:
                return
            try:
                mark_stopped(self.db, self.service_id)
            except Exception as exc:  # it will read down soon anyway
                LOG.warning('Service record not marked down: %s', exc)


def start_heartbeat(conf, db, worker):
    """Record this worker and keep its heartbeat going; returns the
    ``Heartbeat`` whose ``stop()`` a clean stop calls."""
    heartbeat = Heartbeat(conf, db, worker)
    threading.Thread(target=heartbeat._loop, name='heartbeat',
                     daemon=True).start()
    return heartbeat
