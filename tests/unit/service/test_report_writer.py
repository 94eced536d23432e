"""ReportWriter: tracker reports combined into batches."""

import datetime
import logging
import threading

import pytest
from oslo_db import exception as db_exc

from scheduler import exception
from scheduler import objects
from scheduler.service import report_writer
from scheduler.model import resource_classes as rcs
from scheduler.db import changes
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from tests import waiting

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def _report(host, vcpus, seconds=0):
    return objects.ComputeNode.from_stats(host, host, {
        'vcpus': vcpus, 'memory_mb': 1024, 'local_gb': 10,
        'updated_at': T0 + datetime.timedelta(seconds=seconds)})


def _vcpus(db):
    return {p['host']: p['inventories']['VCPU']['total']
            for p in provider_reads.list_providers(db)}


def _pending_tickets(writer):
    with writer._changed:
        return sum(len(t) for _, t in writer._pending.values())


def _while_busy(writer, reports_to_submit):
    """Submit reports from other threads while a batch is being written:
    they wait in memory and form one next batch once it commits. Returns
    what each submit raised (None when it returned)."""
    outcome = {}

    def submit(node):
        try:
            writer.submit(node, timeout=10)
            outcome[node.host] = None
        except exception.ReportNotStored as exc:
            outcome[node.host] = exc

    with writer._changed:
        writer._busy = True
    threads = [threading.Thread(target=submit, args=(node,))
               for node in reports_to_submit]
    for thread in threads:
        thread.start()
    waiting.wait_for(
        lambda: _pending_tickets(writer) >= len(reports_to_submit), 10,
        'every report waiting for the writer', interval=0.01)
    with writer._changed:
        writer._busy = False
        writer._changed.notify_all()
    for thread in threads:
        thread.join(10)
    return outcome


def test_reports_are_written_and_the_newest_per_node_wins(db):
    writer = report_writer.ReportWriter(db, RATIOS)
    _while_busy(writer, [_report('h1', 4, seconds=1),
                         _report('h1', 8, seconds=3),
                         _report('h1', 6, seconds=2),   # older than 8
                         _report('h2', 2)])
    assert _vcpus(db) == {'h1': 8, 'h2': 2}
    assert writer.written == 2
    writer.stop()


def test_one_batch_is_one_feed_stamp(db):
    with db.reader() as session:
        before = changes.position(session)
    writer = report_writer.ReportWriter(db, RATIOS)
    _while_busy(writer, [_report('h%02d' % i, 4) for i in range(20)])
    with db.reader() as session:
        after = changes.position(session)
    # one stripe moved by one: one write transaction for the 20 reports
    assert sum(after.stripes) == sum(before.stripes) + 1
    writer.stop()


def test_a_report_that_fails_to_store_does_not_lose_the_others(
        db, monkeypatch):
    real = db_providers.absorb_reports

    def refuse_bad(database, nodes, ratios, **kwargs):
        if any(n.host == 'bad' for n in nodes):
            raise RuntimeError('the database refused it')
        return real(database, nodes, ratios, **kwargs)

    monkeypatch.setattr(report_writer.db_providers, 'absorb_reports',
                        refuse_bad)
    writer = report_writer.ReportWriter(db, RATIOS)
    outcome = _while_busy(writer, [_report(host, 4)
                                   for host in ('good-1', 'bad', 'good-2')])
    assert set(_vcpus(db)) == {'good-1', 'good-2'}
    assert writer.written == 2
    # the caller of the bad one hears of it: its cast is not acknowledged
    assert outcome['good-1'] is None and outcome['good-2'] is None
    assert 'bad/bad was not stored' in str(outcome['bad'])
    writer.stop()


def test_a_database_outage_is_one_line_not_one_per_report(
        db, monkeypatch, caplog):
    real = db_providers.absorb_reports
    away = [True]

    def unreachable(database, nodes, ratios, **kwargs):
        if away[0]:
            raise db_exc.DBConnectionError('connection refused')
        return real(database, nodes, ratios, **kwargs)

    monkeypatch.setattr(report_writer.db_providers, 'absorb_reports',
                        unreachable)
    caplog.set_level(logging.INFO)
    writer = report_writer.ReportWriter(db, RATIOS)
    outcome = _while_busy(writer, [_report('h%d' % i, 4) for i in range(5)])
    outcome.update(_while_busy(writer, [_report('h9', 4)]))
    assert all(isinstance(e, exception.ReportNotStored)
               for e in outcome.values())
    away[0] = False
    writer.submit(_report('h0', 4), timeout=10)
    lines = [r.getMessage() for r in caplog.records
             if r.name == report_writer.LOG.logger.name]
    assert len(lines) == 2, lines
    assert 'database unreachable' in lines[0]
    assert 'works again' in lines[1]
    assert 'Traceback' not in caplog.text
    writer.stop()


def test_submit_returns_once_its_report_is_committed(db):
    writer = report_writer.ReportWriter(db, RATIOS)
    writer.submit(_report('h1', 4))
    assert _vcpus(db) == {'h1': 4}
    assert writer.flush(0)


def test_a_report_not_written_in_time_is_refused(db):
    writer = report_writer.ReportWriter(db, RATIOS)
    with writer._changed:
        writer._busy = True             # a batch that never ends
    with pytest.raises(exception.ReportNotStored, match='in the time'):
        writer.submit(_report('slow', 4), timeout=0.2)


def test_held_reports_are_written_in_one_transaction_when_waited_for(db):
    with db.reader() as session:
        before = changes.position(session)
    writer = report_writer.ReportWriter(db, RATIOS)
    # more than one MAX_BATCH: a server's batch is one transaction anyway
    count = report_writer.MAX_BATCH + 10
    with writer.holding() as held:
        for i in range(count):
            writer.submit(_report('h%03d' % i, 4))
        writer.submit(_report('h000', 8, seconds=1))
    assert _vcpus(db) == {}
    writer.wait(held)
    with db.reader() as session:
        after = changes.position(session)
    assert sum(after.stripes) == sum(before.stripes) + 1
    assert len(_vcpus(db)) == count and _vcpus(db)['h000'] == 8
    writer.check(held)
    writer.stop()


def test_a_held_report_not_stored_fails_its_own_check(db, monkeypatch):
    writer = report_writer.ReportWriter(db, RATIOS)
    real = db_providers.absorb_reports

    def absorb_reports(db, nodes, *args, **kwargs):
        if any(n.host == 'bad' for n in nodes):
            raise RuntimeError('the database refused it')
        return real(db, nodes, *args, **kwargs)
    monkeypatch.setattr(db_providers, 'absorb_reports', absorb_reports)
    with writer.holding() as held:
        writer.submit(_report('good', 4))
        writer.submit(_report('bad', 4))
    writer.wait(held)
    writer.check(held[:1])
    with pytest.raises(exception.ReportNotStored):
        writer.check(held[1:])
    assert _vcpus(db) == {'good': 4}
    writer.stop()
