"""The report topic in batches (kombu's in-memory broker, a real manager on
SQLite; the real broker: tests/functional/test_reports_durable.py): a
batch's reports are written together and acknowledged after the commit,
a batch that was not stored is delivered once more, a bad message is
refused alone, and other drivers keep the per-message server."""

import logging
import threading
import time
import types

import oslo_messaging
import pytest

from scheduler.client import SchedulerClient
from scheduler import conf as sched_conf
from scheduler import context as sched_context
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler import exception
from scheduler.rpc import late_ack
from scheduler.rpc import messaging
from scheduler.rpc import report_batches
from scheduler.service import composition
from tests import waiting

CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])
HOST = {'vcpus': 8, 'memory_mb': 16384, 'local_gb': 500}
DOWN = exception.SchedulerException('database down')


@pytest.fixture
def worker(conf, db, transport, monkeypatch):
    """A report worker (batches of at most 10, gathered for up to 0.3 s),
    its client, and the batches ``absorb_reports`` was given."""
    conf.set_override('report_batch_size', 10, 'scheduler')
    conf.set_override('report_batch_window', 0.3, 'scheduler')
    state = types.SimpleNamespace(fail=[], gate=threading.Event(),
                                  written=[])
    state.gate.set()
    real = db_providers.absorb_reports

    def absorb_reports(db, nodes, *args, **kwargs):
        state.written.append(sorted(n.host for n in nodes))
        if state.fail and state.fail.pop(0):
            raise DOWN
        state.gate.wait(10)
        return real(db, nodes, *args, **kwargs)
    monkeypatch.setattr(db_providers, 'absorb_reports', absorb_reports)
    manager = composition.build_manager(conf, db)
    servers = messaging.get_server(conf, transport, [manager],
                                   serves=messaging.SERVES_REPORTS,
                                   report_writer=manager.report_writer)
    servers.start()
    state.server = servers.servers[0]
    state.client = SchedulerClient(conf, transport=transport)
    state.transport = transport
    state.topic = sched_conf.scheduler.report_topic(conf)
    yield state
    state.gate.set()
    servers.stop()
    servers.wait()
    manager.stop()


def _report(worker, host, **stats):
    worker.client.update_resource_stats(CTXT, host, dict(HOST, **stats))


def _stored(db):
    return {p['host']: p['inventories']['VCPU']['total']
            for p in provider_reads.list_providers(db)}


def _unacknowledged(server):
    return server.loop.unacknowledged


def test_a_batch_is_written_at_once_and_acknowledged_after(worker, db):
    assert type(worker.server) is report_batches.ReportBatchServer
    worker.gate.clear()
    for index in range(25):
        _report(worker, 'h%02d' % index)
    waiting.wait_for(lambda: worker.written, what='a batch being written')
    # the batch is in its transaction: none of it is acknowledged yet
    assert _unacknowledged(worker.server) >= len(worker.written[0]) > 1
    worker.gate.set()
    waiting.wait_for(lambda: len(_stored(db)) == 25,
                     what='every report stored')
    waiting.wait_for(lambda: _unacknowledged(worker.server) == 0,
                     what='every message acknowledged')
    # fewer transactions than reports (batches waiting for the same
    # turn may share one: group commit)
    assert len(worker.written) < 25


def test_the_newest_report_of_a_host_in_a_batch_is_written(worker, db):
    worker.gate.clear()
    _report(worker, 'first')
    waiting.wait_for(lambda: worker.written, what='a batch being written')
    # these three wait for the next batch, gathered meanwhile
    for vcpus in (4, 16, 2):
        _report(worker, 'dup', vcpus=vcpus,
                updated_at='2026-01-01T00:00:%02dZ' % vcpus)
    worker.gate.set()
    waiting.wait_for(lambda: 'dup' in _stored(db),
                     what='the report of dup stored')
    assert _stored(db)['dup'] == 16
    assert worker.written[1:] == [['dup']]


def test_a_batch_gathers_on_while_every_thread_writes(worker, db):
    """A database slower than the window (a worker far from it): what
    arrives while both threads handle a batch is one batch once a thread
    is free, not a batch per window, each a transaction of its own."""
    worker.gate.clear()
    _report(worker, 'first')
    waiting.wait_for(lambda: worker.written, what='a batch being written')
    _report(worker, 'second')       # the other thread's, waiting its turn
    waiting.wait_for(lambda: worker.server.handling == 2,
                     what='both threads handling a batch')
    for host in ('a', 'b', 'c'):    # each in a window of its own
        _report(worker, host)
        time.sleep(0.4)
    # a loaded machine may deliver the last one after its window
    waiting.wait_for(lambda: worker.server.gathered == 3,
                     what='the three gathered')
    worker.gate.set()
    waiting.wait_for(lambda: len(_stored(db)) == 5,
                     what='every report stored')
    # the three are one batch, not one per window; 'second', queued at
    # the writer while 'first' was written, goes alone or with them,
    # whichever the writer's next write finds queued
    assert worker.written[0] == ['first']
    assert worker.written[1:] in ([['second'], ['a', 'b', 'c']],
                                  [sorted(['a', 'b', 'c', 'second'])])


def test_a_batch_not_stored_is_delivered_once_more(worker, db):
    worker.fail = [True]
    for host in ('a', 'b', 'c'):
        _report(worker, host)
    waiting.wait_for(lambda: len(_stored(db)) == 3,
                     what='the batch stored at last')
    assert worker.written[0] == ['a', 'b', 'c']
    assert sorted(sum(worker.written[1:], [])) == ['a', 'b', 'c']


def test_a_batch_not_stored_twice_is_dropped(worker, db, caplog):
    worker.fail = [True, True]
    _report(worker, 'lost')
    waiting.wait_for(lambda: len(worker.written) == 2,
                     what='a second delivery')
    waiting.wait_for(lambda: _unacknowledged(worker.server) == 0,
                     what='the message acknowledged')
    _report(worker, 'kept')
    waiting.wait_for(lambda: 'kept' in _stored(db),
                     what='the next report stored')
    assert 'lost' not in _stored(db)
    assert 'dropped, as it was delivered twice' in caplog.text


def test_a_bad_message_is_refused_alone(worker, db, caplog):
    caplog.set_level(logging.WARNING)
    worker.gate.clear()
    _report(worker, 'first')
    waiting.wait_for(lambda: worker.written, what='a batch being written')
    _report(worker, 'good1')
    # what no client of ours sends: checked by the worker's edge
    oslo_messaging.get_rpc_client(
        worker.transport, oslo_messaging.Target(topic=worker.topic),
        serializer=messaging.get_serializer()).cast(
            CTXT, 'update_resource_stats', name='bad',
            stats=dict(HOST, vcpus=-1))
    _report(worker, 'good2')
    worker.gate.set()
    waiting.wait_for(lambda: {'good1', 'good2'} <= set(_stored(db)),
                     what='the good reports stored')
    waiting.wait_for(lambda: _unacknowledged(worker.server) == 0,
                     what='every message acknowledged')
    assert 'bad' not in _stored(db)
    assert worker.written[1:] == [['good1', 'good2']]
    assert caplog.text.count('Rejected update_resource_stats (cast)') == 1


@pytest.mark.parametrize('url, batch_size, expected, served_by', [
    (messaging.EMBEDDED_TRANSPORT_URL, 200, report_batches.ReportBatchServer,
     report_batches.ReportBatchServer),
    (messaging.EMBEDDED_TRANSPORT_URL, 1, late_ack.ReportServer,
     late_ack.ReportServer),
    # another driver: oslo.messaging's own server, acknowledging on arrival
    ('fake:/', 200, late_ack.ReportServer,
     oslo_messaging.rpc.server.RPCServer),
])
def test_batches_with_the_rabbit_driver_only(conf, url, batch_size,
                                             expected, served_by):
    conf.set_override('report_batch_size', batch_size, 'scheduler')
    conf.set_override('transport_url', url)
    transport = messaging.get_transport(conf)
    try:
        server_cls, extra = report_batches.server_class(conf, object())
        server = messaging.server(
            conf, transport,
            oslo_messaging.Target(topic='reports', server='w1'),
            object(), server_cls, **extra)
    finally:
        transport.cleanup()
    assert server_cls is expected
    assert type(server) is served_by
