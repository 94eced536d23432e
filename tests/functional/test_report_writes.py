"""Issue 22: a batch of tracker reports in few statements, never stale.

``scheduler.db.providers.absorb_reports`` reads what is stored once, without
a lock, to skip the reports that change nothing; the write that follows
reuses that read for the providers no one wrote since (their generation
moved by the write's own lock only) and reads the others again under the
lock. On each database:

* a batch of changed reports of stored hosts reads the inventories once,
  and on PostgreSQL and MySQL/MariaDB updates all their rows in one
  statement per table (``scheduler.db.rows_update``), leaving exactly
  the values an executemany left (nulls, flags, microseconds, ratios),
  however many statements a batch takes;
* a report whose host was written between that read and the lock (a
  report of a moment before, a claim) still leaves exactly what it says;
* two reports of one host in a batch leave the newest.
"""

import datetime

import pytest
import sqlalchemy as sa
from oslo_utils import uuidutils

from scheduler import objects
from scheduler.db import claims
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler.db import rows_update
from scheduler.model import resource_classes as rcs
from tests.functional import databases

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}
FRESH_FOR = 60.0

pytestmark = pytest.mark.parametrize('backend', databases.BACKENDS)


def _node(host, second, vcpus=8, used=0, beat=0):
    return objects.ComputeNode.from_stats(host, host, {
        'vcpus': vcpus, 'memory_mb': 8192, 'local_gb': 100,
        'vcpus_used': used, 'stats': {'beat': str(beat)},
        'updated_at': datetime.datetime(2026, 1, 1, 0, 0, second,
                                        tzinfo=datetime.timezone.utc)})


def _absorb(db, nodes):
    return db_providers.absorb_reports(db, nodes, RATIOS,
                                       fresh_for=FRESH_FOR)


def _inventory(db, host, rc=rcs.VCPU):
    [stored] = [p for p in provider_reads.list_providers(db)
                if p['host'] == host]
    return stored['inventories'][rc]


def _vcpu(db, host):
    inventory = _inventory(db, host)
    return inventory['total'], inventory['reported_used']


class _Statements:
    """The statements the engine of ``db`` sends, as (verb, table); an
    executemany other than an INSERT as one per row, as PyMySQL sends it
    (it folds only INSERTs into one statement)."""

    def __init__(self, db):
        self.seen = []
        self._engine = db.engine

    def _count(self, conn, cursor, statement, parameters, context,
               executemany):
        words = statement.replace('(', ' ').split() + ['']
        verb = words[0]
        if verb == 'WITH':      # PostgreSQL's stamp: the UPDATE after a CTE
            verb = 'UPDATE'
            words = words[len(words) - words[::-1].index('UPDATE') - 1:]
        if verb == 'SELECT':
            table = words[words.index('FROM') + 1] if 'FROM' in words else ''
        elif verb == 'UPDATE' and 'STRAIGHT_JOIN' in words:
            # MySQL's: the rows' values joined to the table they set
            table = words[words.index('STRAIGHT_JOIN') + 1]
        else:
            table = words[2] if verb == 'INSERT' else words[1]
        rows = len(parameters) if executemany and verb != 'INSERT' else 1
        self.seen.extend([(verb, table)] * rows)

    def __enter__(self):
        sa.event.listen(self._engine, 'before_cursor_execute', self._count)
        return self

    def __exit__(self, *exc):
        sa.event.remove(self._engine, 'before_cursor_execute', self._count)

    def count(self, verb, table):
        return self.seen.count((verb, table))


def test_a_batch_of_changed_reports_reads_inventories_once(database):
    hosts = ['rw-%02d' % i for i in range(12)]
    assert _absorb(database, [_node(h, 0) for h in hosts]) == (12, 0)
    with _Statements(database) as sent:
        assert _absorb(database, [_node(h, 10, used=i % 3, beat=1)
                                  for i, h in enumerate(hosts)]) == (12, 0)
    assert sent.count('SELECT', 'inventories') == 1, sent.seen
    if database.is_postgresql:
        # the unlocked read and the lock (FOR NO KEY UPDATE), their
        # inventories, then the providers' values, generation and stamp in
        # one UPDATE: one new version of each provider row
        assert sent.seen.count(('SELECT', 'providers')) == 2, sent.seen
        assert sent.count('UPDATE', 'providers') == 1, sent.seen
        assert sent.count('UPDATE', 'inventories') == 1, sent.seen
        assert sent.seen[-1] == ('UPDATE', 'providers'), sent.seen
    elif database.engine.dialect.name == 'mysql':
        # the lock (which bumps the generations), one statement for the
        # 12 providers' values and one for their 36 inventories (an
        # executemany sent one per row), then the stamp
        assert sent.count('UPDATE', 'providers') == 3, sent.seen
        assert sent.count('UPDATE', 'inventories') == 1, sent.seen
    for i, host in enumerate(hosts):
        assert _vcpu(database, host) == (8, i % 3)


def _versions(db):
    """{host: (generation, (feed_stripe, feed_seq))} of the stored
    providers: the generation and the stamp."""
    P = db_providers.P
    with db.engine.connect() as connection:
        return {row.host: (row.generation, (row.feed_stripe, row.feed_seq))
                for row in connection.execute(sa.select(
                    P.c.host, P.c.generation, P.c.feed_stripe,
                    P.c.feed_seq))}


def test_a_written_report_moves_its_generation_by_one_and_is_stamped(
        database):
    """A batch of a new host, a changed report and an older one: the new
    host starts at generation 0, the changed one moves by exactly one
    (once, whichever statement bumps it), each is stamped in the feed;
    the host whose report is older than stored stays as it was."""
    _absorb(database, [_node('g1', 10), _node('g2', 10)])
    before = _versions(database)
    assert _absorb(database, [_node('g1', 20, beat=1), _node('g2', 5),
                              _node('g3', 20)]) == (2, 0)
    after = _versions(database)
    assert after['g1'][0] == before['g1'][0] + 1
    assert after['g1'][1] != before['g1'][1]
    assert after['g2'] == before['g2']
    assert after['g3'][0] == 0 and after['g3'][1] == after['g1'][1]
    # the same batch without the new host: the one-statement stamp
    assert _absorb(database, [_node('g1', 30, beat=2),
                              _node('g3', 30, beat=2)]) == (2, 0)
    last = _versions(database)
    assert last['g1'][0] == after['g1'][0] + 1
    assert last['g3'][0] == 1 and last['g3'][1] != after['g3'][1]
    assert last['g1'][1] == last['g3'][1]


def _written_meanwhile(monkeypatch, write):
    """Run ``write`` once, between the unlocked read of the next batch
    and its write."""
    read = db_providers._skip_unchanged

    def read_then_write(*args):
        answer = read(*args)
        monkeypatch.setattr(db_providers, '_skip_unchanged', read)
        write()
        return answer
    monkeypatch.setattr(db_providers, '_skip_unchanged', read_then_write)


def test_a_report_of_a_host_written_since_the_read_is_not_lost(
        database, monkeypatch):
    """Stored: 8 VCPUs. A report of second 20 says 8 again (and a new
    beat, so it is written); between its read and its lock, a report of
    second 10 says 4. The report of second 20 is the newest: 8 stays."""
    _absorb(database, [_node('h1', 0), _node('h2', 0)])
    _written_meanwhile(monkeypatch, lambda: _absorb(
        database, [_node('h1', 10, vcpus=4)]))
    with _Statements(database) as sent:
        assert _absorb(database, [_node('h1', 20, beat=2),
                                  _node('h2', 20, vcpus=6)]) == (2, 0)
    assert _vcpu(database, 'h1') == (8, 0)
    assert _vcpu(database, 'h2') == (6, 0)
    # the unlocked read, then the locked one of h1 alone (and the
    # meanwhile write's own)
    assert sent.count('SELECT', 'inventories') >= 2, sent.seen


def test_a_claim_since_the_read_is_kept(database, monkeypatch):
    """A claim between the read and the lock moves the generation: the
    write reads the inventories again, writes what the report changed and
    keeps the claim's usage."""
    [provider] = [provider_reads.find_provider(database, 'h1')['id']
                  for _ in [_absorb(database, [_node('h1', 0)])]]
    _written_meanwhile(monkeypatch, lambda: claims.claim_resources(
        database, [claims.Claim(uuidutils.generate_uuid(), provider,
                                {rcs.VCPU: 1})]))
    assert _absorb(database, [_node('h1', 10, used=1, beat=1)]) == (1, 0)
    assert _vcpu(database, 'h1') == (8, 1)
    assert _inventory(database, 'h1')['claimed'] == 1


@pytest.mark.parametrize('order', ['newest-last', 'newest-first'])
def test_two_reports_of_one_host_in_a_batch_leave_the_newest(database, order):
    _absorb(database, [_node('h1', 0)])
    reports = [_node('h1', 10, vcpus=4, beat=1), _node('h1', 20, vcpus=6,
                                                       beat=2)]
    if order == 'newest-first':
        reports.reverse()
    assert _absorb(database, reports) == (1, 0)
    assert _vcpu(database, 'h1') == (6, 0)


@pytest.mark.parametrize('rows_per_statement', [rows_update.MYSQL_ROWS, 2])
def test_a_batch_leaves_every_value_as_reported(database, monkeypatch,
                                                rows_per_statement):
    monkeypatch.setattr(rows_update, 'MYSQL_ROWS', rows_per_statement)
    ratios = {rcs.VCPU: 1.1, rcs.MEMORY_MB: 0.3, rcs.DISK_GB: 1e-05}
    hosts = ['rv-%d' % i for i in range(5)]
    db_providers.absorb_reports(database, [_node(h, 0) for h in hosts],
                                ratios, fresh_for=FRESH_FOR)
    later = datetime.datetime(2026, 1, 1, 0, 0, 10, 123456,
                              tzinfo=datetime.timezone.utc)
    reports = []
    for i, host in enumerate(hosts):
        node = _node(host, 10, vcpus=9 + i, used=i)
        node.updated_at = later
        # the first row's values null where the others' are not
        node.disabled = i % 2 == 1
        if i:
            node.availability_zone = 'az-%d' % i
        reports.append(node)
    assert db_providers.absorb_reports(database, reports, ratios,
                                       fresh_for=FRESH_FOR) == (5, 0)
    stored = {p['host']: p for p in provider_reads.list_providers(database)}
    for i, host in enumerate(hosts):
        provider = stored[host]
        assert bool(provider['disabled']) is (i % 2 == 1)
        assert provider['availability_zone'] == (
            'az-%d' % i if i else None)
        vcpu = provider['inventories'][rcs.VCPU]
        assert (vcpu['total'], vcpu['reported_used']) == (9 + i, i)
        assert vcpu['allocation_ratio'] == 1.1
        assert provider['inventories'][rcs.MEMORY_MB][
            'allocation_ratio'] == 0.3
        assert provider['inventories'][rcs.DISK_GB][
            'allocation_ratio'] == 1e-05
    # the same values a second later: every stored value compares equal
    # to what was reported, so all five are skipped as unchanged
    for node in reports:
        node.updated_at = later + datetime.timedelta(seconds=1)
    assert db_providers.absorb_reports(database, reports, ratios,
                                       fresh_for=FRESH_FOR) == (0, 5)
