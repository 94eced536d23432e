"""Service records: which scheduler workers run, what they run, are they up.

Each ``scheduler-server`` worker calls ``start_heartbeat(conf, db, index)``
once when it starts serving: that inserts its row (host, pid, worker index,
release, RPC and object versions) and a daemon thread stamps
``heartbeat_at`` every ``[DEFAULT] heartbeat_interval`` seconds until the
process ends. A worker is *up* while its last heartbeat is younger than
``[DEFAULT] worker_down_time``; ``list_services`` says which are.
``purge_services`` deletes rows of workers down for longer than a given
age (``scheduler-manage db purge``).

Times are naive UTC, like every other timestamp in the database. Workers
of release 0.1 keep no record (they predate this table).
"""

import datetime
import json
import os
import threading

import sqlalchemy as sa
from oslo_log import log as logging

from scheduler import objects
from scheduler import version
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
    sa.Column('object_versions', sa.Text, nullable=False),
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


def register(db, host, worker, at=None):
    """Insert this process's record; returns its id."""
    at = at or now()
    with db.writer() as session:
        result = session.execute(sa.insert(SERVICES).values(
            host=host, binary=BINARY, pid=os.getpid(), worker=worker,
            release=version.release(), rpc_version=version.RPC_API_VERSION,
            object_versions=json.dumps(object_versions(), sort_keys=True),
            started_at=at, heartbeat_at=at))
        return result.inserted_primary_key[0]


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
        item['up'] = item['heartbeat_at'] >= limit
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


def start_heartbeat(conf, db, worker):
    """Record this worker and keep its heartbeat going (daemon thread).
    A database error is logged and retried at the next beat: a worker
    never stops serving because its record could not be written."""
    state = {'id': None}

    def tick():
        try:
            if state['id'] is None:
                state['id'] = register(db, conf.host, worker)
            else:
                beat(db, state['id'])
        except Exception as exc:  # keep serving; the record can wait
            LOG.warning('Service record not written: %s', exc)

    def loop():
        tick()
        while not stopped.wait(conf.heartbeat_interval):
            tick()

    stopped = threading.Event()
    threading.Thread(target=loop, name='heartbeat', daemon=True).start()
    return stopped
