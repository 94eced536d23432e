"""Casts with a send time end as the newest one says, whatever the order
they are handled in (real scheduler-server, 2 workers, RabbitMQ, each
database).

Several clients each send, for uuids of their own, an update and then a
delete: the two casts of a pair reach the two workers (and their threads)
in any order, and every pair must end deleted. The issue's probe found
14 of 100 instances and 1 of 100 aggregates alive this way.

The same race, deterministic and in process (``database``, each
backend): one writer runs in this thread, and after each of its steps in
turn (a statement, a COMMIT) the other writer runs in another thread, to
its end or until it waits for a lock. The delete must win at every step.

A send time ahead of the worker's clock is ordered as if sent at the
worker's now (``scheduler.db.send_order``, doc/source/ordering.rst): an
update stamped 290 s ahead does not survive the delete sent after it.
"""

import concurrent.futures
import contextlib
import datetime
import os
import threading
import uuid

import pytest
import sqlalchemy as sa
from oslo_utils import timeutils

from scheduler.db import aggregates as db_aggregates
from scheduler.db import instances as db_instances
from scheduler.db import models
from scheduler import objects
from tests.functional import databases
from tests.functional import db_state
from tests.functional import workload

#: update/delete pairs per kind: 200 in CI (about 5 s per backend for
#: both kinds); the issue's target, 1,000, with SCHEDULER_CAST_ORDER_PAIRS=1000
#: (15-21 s on SQLite and PostgreSQL, 27-29 s on MariaDB, here)
PAIRS = int(os.environ.get('SCHEDULER_CAST_ORDER_PAIRS', 200))
CLIENTS = 4
HOST = 'order-host'


def _instance_pair(client, uid):
    ctxt = workload.context()
    client.update_instance_info(ctxt, HOST, {'uuid': uid, 'node': HOST})
    client.delete_instance_info(ctxt, HOST, uid)


def _aggregate_pair(client, uid):
    ctxt = workload.context()
    client.update_aggregates(ctxt, [{'uuid': uid, 'name': 'agg-' + uid[:8],
                                     'hosts': [HOST], 'metadata': {}}])
    client.delete_aggregate(ctxt, uid)


def _send_pairs(clients, pair):
    """PAIRS pairs from these clients at once; their uuids."""
    uuids = [str(uuid.uuid4()) for _ in range(PAIRS)]

    def send(index):
        for uid in uuids[index::CLIENTS]:
            pair(clients[index], uid)
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        for done in [pool.submit(send, i) for i in range(CLIENTS)]:
            done.result()
    return uuids


def _counts(server, table):
    """(alive, deleted) rows of ``table``."""
    with server.engine.connect() as conn:
        rows = dict(conn.execute(sa.select(
            table.c.deleted, sa.func.count()).group_by(
                table.c.deleted)).all())
    return (sum(n for deleted, n in rows.items() if not deleted),
            sum(n for deleted, n in rows.items() if deleted))


def _settled(server, table, expected, timeout=60):
    """(alive, deleted) once every uuid has its tombstone, or once the
    counts stopped changing for 2 s (some left alive)."""
    seen = []

    def settled():
        seen.append(_counts(server, table))
        if seen[-1] == (0, expected):
            return seen[-1]
        if len(seen) > 4 and len(set(seen[-5:])) == 1:
            return seen[-1]
        return None
    return db_state.wait_for(settled, timeout,
                             '%d %s rows' % (expected, table.name), 0.5)


@pytest.mark.parametrize('backend', databases.BACKENDS)
def test_a_delete_never_loses_to_the_update_sent_before_it(
        scheduler, backend, summary_line):
    server = scheduler(workers=2)
    clients = [server.client() for _ in range(CLIENTS)]
    started = timeutils.utcnow()
    _send_pairs(clients, _instance_pair)
    _send_pairs(clients, _aggregate_pair)
    figures = {}
    for table in (models.instances, models.aggregates):
        figures[table.name] = _settled(server, table, PAIRS)
    summary_line('cast order %s: %d update/delete pairs from %d clients '
                 'per kind, 2 workers, (alive, deleted) %s in %.1f s' % (
                     backend, PAIRS, CLIENTS, figures,
                     (timeutils.utcnow() - started).total_seconds()))
    assert figures == {'instances': (0, PAIRS), 'aggregates': (0, PAIRS)}
    _check_a_send_time_from_the_future_does_not_freeze_an_aggregate(
        server, clients[0])
    assert server.errors_in_log() == []


def _sent_ahead(seconds, cast):
    """Send ``cast()`` with a send time ``seconds`` ahead of this clock."""
    timeutils.set_time_override(
        timeutils.utcnow() + datetime.timedelta(seconds=seconds))
    try:
        cast()
    finally:
        timeutils.clear_time_override()


def _check_a_send_time_from_the_future_does_not_freeze_an_aggregate(
        server, client):
    ctxt, uid = workload.context(), str(uuid.uuid4())
    before = _counts(server, models.aggregates)
    _sent_ahead(290, lambda: client.update_aggregates(ctxt, [{
        'uuid': uid, 'name': 'ahead', 'hosts': [HOST], 'metadata': {}}]))
    db_state.wait_for(
        lambda: _counts(server, models.aggregates) == (
            before[0] + 1, before[1]), 20, 'the aggregate stored')
    client.delete_aggregate(ctxt, uid)
    db_state.wait_for(
        lambda: _counts(server, models.aggregates) == (
            before[0], before[1] + 1), 20,
        'the aggregate deleted by the later delete')


# -- the same race, one step at a time ---------------------------------

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0)
#: how long the other writer may take before it counts as waiting for a
#: lock this thread's writer holds
BLOCKED = 0.3


class _Interleave:
    """Counts the steps of this thread's writes on ``db`` (statements
    executed, transactions committed); after step ``at``, runs ``other``
    in another thread, to its end or for ``BLOCKED`` seconds."""

    def __init__(self, db, at, other):
        self.db, self.at, self.other = db, at, other
        self.steps, self.thread = 0, None
        self.writer_thread = threading.get_ident()

    def _counted(self, writer):
        """``writer`` (a transaction), with its commit counted a step."""
        @contextlib.contextmanager
        def counted():
            with writer() as session:
                yield session
            self.step()
        return counted

    def step(self, *args):
        if threading.get_ident() != self.writer_thread:
            return
        self.steps += 1
        if self.steps == self.at:
            self.thread = threading.Thread(target=self.other)
            self.thread.start()
            self.thread.join(BLOCKED)

    @contextlib.contextmanager
    def running(self, monkeypatch):
        for name in ('writer', 'core_writer'):
            monkeypatch.setattr(self.db, name, self._counted(
                getattr(self.db, name)))
        sa.event.listen(self.db.engine, 'after_cursor_execute', self.step)
        try:
            yield
        finally:
            sa.event.remove(self.db.engine, 'after_cursor_execute',
                            self.step)
            monkeypatch.undo()
            if self.thread is not None:
                self.thread.join(30)


def _instance_writers(db, uid):
    info = objects.InstanceInfo(uuid=uid, node='n1')
    return (lambda: db_instances.save_instances(db, 'h1', [info], T0),
            lambda: db_instances.delete_instance(
                db, 'h1', uid, T0 + datetime.timedelta(microseconds=1)))


def _aggregate_writers(db, uid):
    agg = objects.Aggregate(uuid=uid, name='a', hosts=['h1'], metadata={})
    return (lambda: db_aggregates.save_aggregates(db, [agg], T0),
            lambda: db_aggregates.delete_aggregate(
                db, uid, T0 + datetime.timedelta(microseconds=1)))


def _alive(db, table, uid):
    with db.reader() as session:
        return session.execute(sa.select(table.c.deleted).where(
            table.c.uuid == uid)).scalar_one_or_none() is False


@pytest.mark.parametrize('backend', databases.BACKENDS)
@pytest.mark.parametrize('kind', ('instances', 'aggregates'))
@pytest.mark.parametrize('first', ('update', 'delete'))
def test_the_delete_wins_at_every_step_of_the_update(database, monkeypatch,
                                                     kind, first):
    writers, table = {
        'instances': (_instance_writers, models.instances),
        'aggregates': (_aggregate_writers, models.aggregates)}[kind]
    at, lost = 1, []
    while True:
        uid = str(uuid.uuid4())
        update, delete = writers(database, uid)
        mine, other = (update, delete) if first == 'update' else (
            delete, update)
        interleave = _Interleave(database, at, other)
        with interleave.running(monkeypatch):
            mine()
        if interleave.thread is None:
            break       # past the last step: every one was tried
        if _alive(database, table, uid):
            lost.append(at)
        at += 1
    assert at > 3
    assert lost == [], 'alive when the other writer ran after step %s' % (
        lost,)
