"""ReportWriter: tracker reports written in batches by one thread."""

import datetime

from scheduler import objects
from scheduler import reports
from scheduler import resource_classes as rcs
from scheduler.db import api as db_api
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


def test_reports_are_written_and_the_newest_per_node_wins(db):
    writer = reports.ReportWriter(db, RATIOS)
    # nothing drains until start(): all of these land in one batch
    writer.submit(_report('h1', 4, seconds=1))
    writer.submit(_report('h1', 8, seconds=3))
    writer.submit(_report('h1', 6, seconds=2))   # older than 8: ignored
    writer.submit(_report('h2', 2))
    writer.start()
    assert writer.flush(10)
    assert _vcpus(db) == {'h1': 8, 'h2': 2}
    assert writer.written == 2
    writer.stop()


def test_one_batch_bumps_the_change_counter_once(db):
    with db.reader() as session:
        before = db_api.current_change_seq(session)
    writer = reports.ReportWriter(db, RATIOS)
    for index in range(20):
        writer.submit(_report('h%02d' % index, 4))
    writer.start()
    assert writer.flush(10)
    with db.reader() as session:
        assert db_api.current_change_seq(session) == before + 1
    writer.stop()


def test_a_report_that_fails_to_store_does_not_lose_the_others(
        db, monkeypatch):
    real = db_providers.record_compute_nodes

    def refuse_bad(database, nodes, ratios):
        if any(n.host == 'bad' for n in nodes):
            raise RuntimeError('the database refused it')
        return real(database, nodes, ratios)

    monkeypatch.setattr(reports.db_providers, 'record_compute_nodes',
                        refuse_bad)
    writer = reports.ReportWriter(db, RATIOS)
    for host in ('good-1', 'bad', 'good-2'):
        writer.submit(_report(host, 4))
    writer.start()
    assert writer.flush(10)
    assert set(_vcpus(db)) == {'good-1', 'good-2'}
    assert writer.written == 2
    writer.stop()


def test_stop_writes_what_is_pending(db):
    writer = reports.ReportWriter(db, RATIOS).start()
    writer.submit(_report('late', 4))
    writer.stop()
    assert 'late' in _vcpus(db)
