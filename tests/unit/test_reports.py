"""ReportWriter: tracker reports combined into batches."""

import datetime

from scheduler import objects
from scheduler import reports
from scheduler import resource_classes as rcs
from scheduler.db import changes
from scheduler.db import providers as db_providers

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def _report(host, vcpus, seconds=0):
    return objects.ComputeNode.from_stats(host, host, {
        'vcpus': vcpus, 'memory_mb': 1024, 'local_gb': 10,
        'updated_at': T0 + datetime.timedelta(seconds=seconds)})


def _vcpus(db):
    return {p['host']: p['inventories']['VCPU']['total']
            for p in db_providers.list_providers(db)}


def _while_busy(writer, reports_to_submit):
    """Submit reports as other RPC threads would while a batch is being
    written: they wait in memory and form the writer's next batch."""
    with writer._changed:
        writer._busy = True
    for node in reports_to_submit:
        writer.submit(node)
    with writer._changed:
        writer._busy = False


def test_reports_are_written_and_the_newest_per_node_wins(db):
    writer = reports.ReportWriter(db, RATIOS)
    _while_busy(writer, [_report('h1', 4, seconds=1),
                         _report('h1', 8, seconds=3),
                         _report('h1', 6, seconds=2),   # older than 8
                         _report('h2', 2)])
    writer.submit(_report('h3', 1))       # this thread writes them all
    assert writer.flush(10)
    assert _vcpus(db) == {'h1': 8, 'h2': 2, 'h3': 1}
    assert writer.written == 3
    writer.stop()


def test_one_batch_is_one_feed_stamp(db):
    with db.reader() as session:
        before = changes.position(session)
    writer = reports.ReportWriter(db, RATIOS)
    _while_busy(writer, [_report('h%02d' % i, 4) for i in range(19)])
    writer.submit(_report('h19', 4))
    assert writer.flush(10)
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

    monkeypatch.setattr(reports.db_providers, 'absorb_reports',
                        refuse_bad)
    writer = reports.ReportWriter(db, RATIOS)
    _while_busy(writer, [_report(host, 4) for host in ('good-1', 'bad')])
    writer.submit(_report('good-2', 4))
    assert writer.flush(10)
    assert set(_vcpus(db)) == {'good-1', 'good-2'}
    assert writer.written == 2
    writer.stop()


def test_stop_writes_what_is_pending(db):
    writer = reports.ReportWriter(db, RATIOS)
    writer.submit(_report('late', 4))
    writer.stop()
    assert 'late' in _vcpus(db)
