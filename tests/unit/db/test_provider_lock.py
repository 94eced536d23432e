"""The one provider lock (``Change.lock_providers``) on SQLite: what it
returns, and that a provider's generation moves once per committed change
of the provider, only then, and always together with the feed's stamp."""

import datetime
import pathlib
import re

import pytest

from scheduler.db import changes
from scheduler.db import claims
from scheduler.db import models
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler.db import send_order
from scheduler import exception
from scheduler.model import resource_classes as rcs

from .. import fakes

C1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
C2 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e52'
T0 = datetime.datetime(2026, 3, 1, 12, 0, 0)
SOURCES = pathlib.Path(__file__).resolve().parents[3] / 'scheduler'


@pytest.fixture
def host(db):
    return fakes.report(db, 'h1', vcpus=4, memory_mb=4096,
                        cpu_allocation_ratio=1.0, updated_at=T0)


def _generation(db, provider_id):
    return provider_reads.load_changes(
        db, provider_ids=[provider_id])[0]['generation']


class _Watch:
    """How a provider's generation moved, and whether the feed stamped
    it, across one operation."""

    def __init__(self, db, provider_id):
        self.db, self.provider_id = db, provider_id

    def __enter__(self):
        self.generation = _generation(self.db, self.provider_id)
        with self.db.reader() as session:
            self.position = changes.position(session)
        return self

    def __exit__(self, *exc):
        self.moved = _generation(self.db, self.provider_id) - self.generation
        stamped = provider_reads.load_changes(self.db, since=self.position)
        self.stamped = self.provider_id in {r['id'] for r in stamped}


def test_the_lock_counts_what_exists_and_bumps_it_once(db, host):
    with changes.write(db) as change:
        locked = change.lock_providers([host, host, host + 100])
        change.providers([host])
    assert locked.found == 1
    assert _generation(db, host) == 1


def test_the_lock_returns_columns_and_answers_the_probe(db, host):
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 1})])
    with changes.write(db) as change:
        assert change.lock_probes_claims  # SQLite has UPDATE ... RETURNING
        rows = change.lock_providers([host], columns=('host',)).rows
        assert [tuple(r) for r in rows] == [(host, 'h1')]
        assert change.lock_providers([host], held_by=[C1]).held
        assert not change.lock_providers([host], held_by=[C2]).held
        change.providers([host])


def test_no_lock_no_statement(db):
    with changes.write(db) as change:
        assert change.lock_providers([]).found == 0


@pytest.mark.parametrize('operation, moves', [
    ('claim', True), ('failed_claim', False), ('release', True),
    ('release_nothing', False), ('newer_report', True),
    ('older_report', False), ('build_failure', True),
    ('sync_confirming', False), ('sync_releasing', True),
])
def test_generation_moves_once_per_change_and_with_the_feed(
        db, host, operation, moves):
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 1})],
                           now=T0)
    operations = {
        'claim': lambda: claims.claim_resources(
            db, [claims.Claim(C2, host, {rcs.VCPU: 1})]),
        'failed_claim': lambda: claims.claim_resources(
            db, [claims.Claim(C2, host, {rcs.VCPU: 9})]),
        'release': lambda: claims.delete_allocations(db, C1),
        'release_nothing': lambda: claims.delete_allocations(db, C2),
        'newer_report': lambda: fakes.report(
            db, 'h1', vcpus=8, updated_at=T0 + datetime.timedelta(1)),
        'older_report': lambda: fakes.report(
            db, 'h1', vcpus=8, updated_at=T0 - datetime.timedelta(1)),
        'build_failure': lambda: db_providers.record_build_failure(db, 'h1'),
        'sync_confirming': lambda: claims.sync_host_consumers(
            db, 'h1', [C1], 600, now=T0 + datetime.timedelta(hours=1)),
        'sync_releasing': lambda: claims.sync_host_consumers(
            db, 'h1', [], 600, now=T0 + datetime.timedelta(hours=1)),
    }
    with _Watch(db, host) as watch:
        try:
            operations[operation]()
        except exception.ClaimConflict:
            assert operation == 'failed_claim'
    assert (watch.moved, watch.stamped) == ((1, True) if moves
                                           else (0, False))


def test_a_reschedule_bumps_both_providers_once(db, host):
    other = fakes.report(db, 'h2', vcpus=4, cpu_allocation_ratio=1.0)
    claims.claim_resources(db, [claims.Claim(C1, host, {rcs.VCPU: 1})])
    before = _generation(db, host), _generation(db, other)
    claims.claim_resources(db, [claims.Claim(C1, other, {rcs.VCPU: 1})])
    assert (_generation(db, host), _generation(db, other)) == (
        before[0] + 1, before[1] + 1)


def test_no_other_module_locks_or_bumps_a_provider():
    """``changes.py`` holds the lock's SQL; nothing else takes a row
    lock on providers or writes their generation (the locking reads of
    ``claims.py`` are of ``allocations``, those of ``send_order.py`` of
    the rows casts order: ``test_send_order_locks_no_provider``, the one
    of ``providers.py`` of the inventories of providers it locked, on
    MariaDB)."""
    for path in SOURCES.rglob('*.py'):
        if 'migrations' in path.parts or path.name == 'changes.py':
            continue
        text = path.read_text()
        assert not re.search(r'(P|providers)\.c\.generation\s*\+', text), \
            path
        assert not re.search(r"generation\s*=\s*(P|providers)\.", text), path
        if 'with_for_update' in text:
            assert path.name in ('claims.py', 'send_order.py',
                                 'providers.py'), path


def test_send_order_locks_no_provider(db):
    assert models.providers not in send_order.TOMBSTONED
    with db.writer() as session:
        with pytest.raises(ValueError):
            send_order.lock(session, models.providers, ['p1'])
