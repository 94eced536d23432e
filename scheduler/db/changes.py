"""The change feed, and the one write primitive every writer goes through.

Writing
-------
Every write transaction of the scheduler (claims, releases, tracker
reports, build failures, aggregates, instances) is::

    with changes.write(db) as change:
        change.lock_providers(ids)          # the providers it changes
        ...                                 # the writer's own statements
        change.providers(ids)               # what workers must re-read
        change.rows(models.aggregates, models.aggregates.c.uuid.in_(uuids))

On leaving the block without an error, just before COMMIT, the change bumps
one counter of ``change_stripes``, drawn at random among ``STRIPES``, and
stamps every recorded row with ``(feed_stripe, feed_seq)`` = (that stripe,
its new value). A transaction that recorded nothing bumps nothing.

Why unrelated writers never wait for each other
-----------------------------------------------
The previous release bumped one ``change_counter`` row in every write and held
its lock until COMMIT: all writers of the cloud queued on it (about 100-150
writes/s here, doc/source/performance-history.rst). Here the only row two
writers of different providers can share is their stripe, which they take last
and hold only for the stamp and the COMMIT; two concurrent writers draw the
same one with probability 1/64. Provider rows are locked before the stripe
(``Change.lock_providers``, below), so the lock order is always providers
-> inventories -> stripe and the stripe can't close a deadlock cycle.
Instance and aggregate rows, which ordered casts change, are locked
before any provider, by ``scheduler.db.send_order.lock`` (by primary key,
sorted): the whole order is instances/aggregates -> providers ->
inventories -> stripe.

Locking a provider: one way, one token
--------------------------------------
``Change.lock_providers`` is the only way a provider row is locked, by
every writer that changes a provider or its usage: claims and reschedules
(``scheduler.db.claims``), releases (``delete_allocations``, the sweeps),
tracker reports and failed builds (``scheduler.db.providers``), ratios
re-derived from aggregates (``scheduler.db.ratios``). It is one statement,
and the SQL of each dialect is built here and nowhere else:

* PostgreSQL: ``SELECT id[, columns] ... ORDER BY id FOR NO KEY UPDATE``,
  the row lock an ``UPDATE`` of a non-key column takes, writing nothing;
  the generation's bump waits for the stamp, which sets it with the feed's
  columns in one statement (``Change._stamp``). A writer thus leaves one
  new version of each provider row, not one more for the lock: every
  version of a provider row is a new entry in each of its five indexes
  (the stamp's columns are indexed, so none is a HOT update). It returns
  the columns the writer asked for (``generation`` as the stamp will set
  it) and, for a claim, whether its consumers hold claims already (the
  probe): a claim of new consumers locks and learns that in one round
  trip. The claim routine (``scheduler.db.claim_routine``) takes the same
  lock (``lock_statement``) and makes the same stamp (``stamp_statement``).
* SQLite: ``UPDATE providers SET generation = generation + 1 WHERE id IN
  (...)`` (it has no ``SELECT ... FOR UPDATE``), ``RETURNING`` the asked-for
  columns and the probe, as above.
* MySQL/MariaDB: the same UPDATE; no ``UPDATE ... RETURNING``, so asked-for
  columns are read by a plain SELECT after it (a transaction reads its own
  change, and the UPDATE built it on the latest committed row); there is
  no probe: a subquery on ``allocations`` inside a MariaDB UPDATE takes
  shared next-key locks, and two claims whose new consumers fall in one
  index gap then deadlock on their INSERTs (``lock_probes_claims``). The
  claim procedure (``scheduler.db.claim_procedure``) probes by a
  consistent read before the lock (``SELECT ... INTO``), as the
  transaction path's plain SELECT does, and takes this lock one provider
  at a time in the same order.
* With ``[database] legacy_change_counter`` (below), PostgreSQL locks by
  the UPDATE too, as the previous release did.

Order: the ids are sorted and the database walks them in primary-key
order, ascending (an index range scan of the primary key on InnoDB; a
btree scan whose ``= ANY`` keys PostgreSQL sorts first; SQLite has one
writer at a time, ``BEGIN IMMEDIATE``), and every writer takes all its
providers in one call before it locks any inventory or allocation row (a
server group's or an aggregate's row comes before them). A writer
that learns of one more provider under the lock (a consumer's claim moved
meanwhile) locks it by a second call; a deadlock the database reports
then is retried whole by ``retry_on_deadlock``.

Race-free: the lock is an exclusive row lock held until COMMIT on all
three databases (``FOR NO KEY UPDATE`` conflicts with itself and with the
UPDATE; SQLite's database lock), so two writers of
one provider run one after the other. What the second one decides on
after its lock is what the first committed: PostgreSQL's READ COMMITTED
takes a new snapshot per statement; on MariaDB, whose REPEATABLE READ
snapshot may predate the lock, writers decide on UPDATEs, locking
(current) reads and the locked row itself; SQLite has one writer.
Capacity itself is re-checked by the claim's conditional UPDATE of
``inventories`` (``scheduler.db.claims``), which waits for and re-reads
the latest row on every database: zero overcommit needs no more than that
and this lock, whatever the number of workers.

``providers.generation`` is that lock's token, not a second one: where
the lock is a write anyway (an UPDATE has to set something, and only an
UPDATE carries the probe in one round trip on SQLite, which has no
``SELECT ... FOR UPDATE``), bumping a counter with it costs no statement;
on PostgreSQL the stamp, a write anyway, bumps it. Every
writer locks a stored provider before it changes it, and the feed (below)
stamps every provider it locked, so a provider's generation counts the
committed transactions that changed it (a rolled-back claim leaves it
alone): past its creation (at 0), it moves if and only if the feed
stamps the row. Nothing decides
on it inside the scheduler; it is the row's version for whoever reads the
row: each worker's host table keeps it per provider
(``scheduler.host_state``; equal to the database's once the feed is
applied), ``scheduler-manage`` shows it, and a compare-and-swap or a
Placement peer would compare it.

Why a reader never misses a committed change
--------------------------------------------
A reader first reads every stripe's value (``position``), then the rows
stamped above the values it had before (``since``) in the stripes that
moved. Take a committed transaction T that stamped rows with (s, v):

* T held stripe s's row lock from its bump until its COMMIT, so every
  transaction that bumped s before T committed (or rolled back, undoing its
  bump) before T's bump; values of one stripe therefore become visible in
  increasing order, with no hole below a visible value.
* If the reader's position shows stripe s at ``p >= v``, the transaction
  that wrote ``p`` has committed, hence so has T, and the rows query that
  follows sees T's rows: PostgreSQL's READ COMMITTED takes a new snapshot
  per statement, MariaDB's REPEATABLE READ snapshot is taken at the first
  read of the reader's transaction (the position itself), SQLite runs one
  writer at a time. The reader asks for ``feed_seq > since[s]`` with
  ``since[s] < v`` (it had not seen v yet), so T's rows are returned.
  Any snapshot taken after the position was read does as well: the
  host-state poller reads the position and the providers in one
  transaction on SQLite, in autocommit on PostgreSQL and MariaDB (each
  statement a snapshot of its own, taken after the position's), and
  aggregates and instances in a transaction of their own that follows.
* If the position shows ``p < v``, T is not yet visible: the next read
  finds it, because the reader only moves ``since`` to positions it saw.

A row re-stamped later by another transaction (any stripe) is found through
that transaction by the same argument. Rows stamped above the position
(committed between the two reads) are returned now and again next time:
applying a row twice is harmless.

Which stripes a reader asks about
---------------------------------
A transaction that records rows of other tables (aggregates, instances)
draws its stripe among the last ``ROW_STRIPES``; one that records only
providers (claims, releases, reports: nearly all of them) draws among the
others. A reader therefore asks for aggregates and instances only when one
of those few stripes moved (``Position.rows_moved``): the argument above
holds per stripe, and no other stripe ever stamps such a row. A poll that
finds no stripe moved costs the position's one statement.

``tests/functional/test_change_feed.py`` checks this with concurrent
writers on SQLite, PostgreSQL and MariaDB, for a plain reader and for the
host-state poller (below).

The poller's reads
------------------
The host-state poller's reads (``scheduler.db.provider_reads.poll``) go
through the driver's cursor of a connection it keeps
(``scheduler.db.api.RawReader``), as fixed SQL text with its integers
written in; the feed's part of that text is built here:
``poll_position`` and ``select_changed``. On MySQL and MariaDB the
position comes back as the stripes whose value differs from the position
the poller read last (none on a poll that finds nothing: that driver
decodes rows in Python), the others keeping the value they had.

The previous release
--------------------
Workers of the previous release follow only ``change_counter`` and
``change_seq``. With ``[database] legacy_change_counter`` set (while they
run), every write here also bumps that counter and stamps ``change_seq``,
and readers here also follow it, so old and new workers see each other's
writes. It brings the single hot row back for as long as it is set.
"""

import contextlib
import dataclasses
import functools
import itertools
import random

import sqlalchemy as sa
from sqlalchemy import orm

from scheduler.db import api as db_api
from scheduler.db import models

# migration 0003 creates this many stripe rows
STRIPES = 64
# the last ones, drawn by transactions that stamp aggregates or instances
# (module docstring); two of those rare writers share a stripe more often
ROW_STRIPES = 8
_FIRST_ROW_STRIPE = STRIPES - ROW_STRIPES

STRIPE = models.change_stripes
P = models.providers


@dataclasses.dataclass(frozen=True)
class Position:
    """Where a reader is in the feed: each stripe's value it has seen, and
    the legacy counter's (None unless ``legacy_change_counter``)."""

    stripes: tuple
    legacy: int = None

    def moved(self, other):
        """Has anything changed between ``self`` and a later ``other``?"""
        return other != self

    def rows_moved(self, other):
        """Can aggregates or instances have changed between ``self`` and a
        later ``other`` (a row stripe or the legacy counter moved)?"""
        return (self.stripes[_FIRST_ROW_STRIPE:] !=
                other.stripes[_FIRST_ROW_STRIPE:] or
                self.legacy != other.legacy)


# fixed text, run without compiling (the poller sends it every 100 ms)
_POSITION = 'SELECT stripe, seq FROM %s' % STRIPE.name
_LEGACY_COUNTER = 'SELECT value FROM %s WHERE id = 1' % (
    models.change_counter.name)


def position(connection, legacy=False):
    """The feed's current position (read it before the rows), through a
    session or a Core connection: one statement (two with ``legacy``)."""
    if isinstance(connection, orm.Session):
        connection = connection.connection()
    values = dict(connection.exec_driver_sql(_POSITION).all())
    stripes = tuple(values.get(s, 0) for s in range(STRIPES))
    counter = db_api.current_change_seq(connection) if legacy else None
    return Position(stripes, counter)


def poll_position(cursor, dialect, since=None, legacy=False):
    """The feed's current position, read by a poller through a driver
    ``cursor`` (``scheduler.db.api.RawReader``) of a database of
    ``dialect`` (its name), ``since`` being the position it read last
    (None: none yet). One statement (two with ``legacy``).

    On MySQL/MariaDB, whose driver decodes rows in Python (about 5 us
    each), only the stripes whose value differs from ``since`` are sent
    back, none when nothing moved, and the others keep the value they
    had; elsewhere the 64 rows cost less than the longer statement.
    """
    if since is None or dialect != 'mysql':
        cursor.execute(_POSITION)
        values = dict(cursor.fetchall())
        stripes = tuple(map(values.get, range(STRIPES),
                            itertools.repeat(0)))
    else:
        cursor.execute(_moved_stripes(since))
        values = list(since.stripes)
        for stripe, seq in cursor.fetchall():
            values[stripe] = seq
        stripes = tuple(values)
    counter = None
    if legacy:
        cursor.execute(_LEGACY_COUNTER)
        counter = cursor.fetchone()[0]
    return Position(stripes, counter)


def _moved_stripes(since):
    """SQL: the stripes whose value is not the one of ``since``."""
    return '%s WHERE seq <> CASE stripe %s END' % (_POSITION, ' '.join(
        'WHEN %d THEN %d' % (stripe, seq)
        for stripe, seq in enumerate(since.stripes)))


def changed_after(table, since, until=None):
    """SQL condition: rows of ``table`` changed after position ``since``.

    With ``until`` (a later position), only the stripes that moved in
    between are asked for, which is what keeps a refresh's query small.
    """
    pairs, legacy = _moved(since, until)
    if not pairs and legacy is None:
        return sa.false()
    return _condition(table, len(pairs), legacy is not None).params(
        _feed_params(pairs, legacy))


def select_changed(select, table, since, until=None, dialect=None):
    """SQL text: ``select`` (``SELECT <columns> FROM <table>``) limited to
    the rows of ``table`` changed between ``since`` and ``until``
    (``changed_after``), its integers written in (no parameters), for a
    driver's cursor: the poller's read
    (``scheduler.db.provider_reads.read_changed``).

    On SQLite (``dialect``), one SELECT per stripe asked about, searching
    the feed's index by name, joined by UNION ALL (a row is stamped in
    one stripe: none comes twice): for the OR of the stripes, its planner
    scanned the whole table whenever its statistics were taken with
    most rows on one stripe (after a bulk load), 5 ms per poll at 10k
    providers against 30 us.
    """
    pairs, legacy = _moved(since, until)
    if dialect == 'sqlite' and pairs and legacy is None:
        indexed = '%s INDEXED BY ix_%s_feed WHERE ' % (select, table.name)
        return ' UNION ALL '.join(
            indexed + 'feed_stripe = %d AND feed_seq > %d' % pair
            for pair in pairs)
    terms = ['(feed_stripe = %d AND feed_seq > %d)' % pair
             for pair in pairs]
    if legacy is not None:
        terms.append('change_seq > %d' % legacy)
    return '%s WHERE %s' % (select, ' OR '.join(terms) or '1 = 0')


def _moved(since, until):
    """[(stripe, value seen)] of the stripes to ask about, and the legacy
    counter's value seen (None: not asked about)."""
    stripes = range(STRIPES) if until is None else [
        s for s in range(STRIPES) if until.stripes[s] != since.stripes[s]]
    legacy = since.legacy if since.legacy is not None and (
        until is None or until.legacy != since.legacy) else None
    return [(s, since.stripes[s]) for s in stripes], legacy


def _feed_params(pairs, legacy):
    params = {'feed_legacy': legacy} if legacy is not None else {}
    for i, (stripe, seen) in enumerate(pairs):
        params['feed_s%d' % i] = stripe
        params['feed_q%d' % i] = seen
    return params


@functools.lru_cache(maxsize=None)
def _condition(table, count, legacy):
    """``count`` terms ``feed_stripe = :feed_s<i> AND feed_seq >
    :feed_q<i>`` (and ``change_seq > :feed_legacy``), OR'ed."""
    terms = [sa.and_(
        table.c.feed_stripe == sa.bindparam('feed_s%d' % i,
                                            type_=sa.Integer),
        table.c.feed_seq > sa.bindparam('feed_q%d' % i,
                                        type_=table.c.feed_seq.type))
        for i in range(count)]
    if legacy:
        terms.append(table.c.change_seq > sa.bindparam(
            'feed_legacy', type_=table.c.change_seq.type))
    return sa.or_(*terms) if terms else sa.false()


class Change:
    """One write transaction: its Core connection (``session``, by the
    name every writer uses) and what it changed."""

    def __init__(self, session, legacy):
        self.session = session
        self._legacy = legacy
        self._provider_ids = set()
        self._rows = []
        self.applied_in_memory = False
        self.left_to_poller = False
        # PostgreSQL without the legacy counter: the lock writes nothing
        # and the stamp bumps the generations (module docstring)
        self._bump_at_stamp = (
            not legacy and
            db_api.dialect_of(session).name == 'postgresql')
        self._unbumped = set()
        self._provider_update = None

    @property
    def lock_probes_claims(self):
        """Can ``lock_providers`` answer ``held_by`` in its own statement
        (PostgreSQL, SQLite: ``UPDATE ... RETURNING``)? Elsewhere (MySQL,
        MariaDB) a claim reads its consumers' claims first, by a plain
        SELECT (module docstring)."""
        return db_api.dialect_of(self.session).update_returning

    def lock_providers(self, provider_ids, columns=(), held_by=None):
        """Lock these providers and bump their generation (on PostgreSQL,
        by the stamp): the one way a provider row is locked (module
        docstring: order, SQL per dialect, why it is race-free). One
        statement, plus one SELECT on MySQL and MariaDB when ``columns``
        are asked for.

        ``columns``: names of ``providers`` columns to return, read under
        the lock. ``held_by``: consumer uuids; the lock also says whether
        any of them holds a claim on any provider (the claim's probe, no
        separate read); only where ``lock_probes_claims``.

        Returns a ``Locked``: how many of the providers exist (a missing
        one is not locked) and, if asked, their rows and the probe's
        answer.
        """
        ids = sorted(set(provider_ids))
        if not ids:
            return Locked(found=0)
        columns = tuple(columns)
        probe = held_by is not None
        if self._bump_at_stamp:
            return self._lock_for_stamp(ids, columns, held_by)
        if not (columns or probe):
            return Locked(found=self.session.execute(
                _LOCK, {'ids': ids}).rowcount)
        params = {'ids': ids}
        if probe:
            if not self.lock_probes_claims:
                raise ValueError('the lock carries no probe on %s'
                                 % db_api.dialect_of(self.session).name)
            params['consumers'] = sorted(set(held_by))
        if db_api.dialect_of(self.session).update_returning:
            rows = self.session.execute(_lock_returning(columns, probe),
                                        params).all()
        else:
            self.session.execute(_LOCK, params)
            rows = self.session.execute(_read_locked(columns), params).all()
        return Locked(found=len(rows), rows=rows,
                      held=probe and any(row.held for row in rows))

    def _lock_for_stamp(self, ids, columns, held_by):
        """PostgreSQL's lock: ``SELECT ... FOR NO KEY UPDATE``, the row
        lock of the UPDATE it stands for, in the same order; the
        generation, bumped by the stamp, is returned as the stamp will
        leave it (module docstring)."""
        params = {'ids': ids}
        if held_by is not None:
            params['consumers'] = sorted(set(held_by))
        rows = self.session.execute(
            _select_locked(columns, held_by is not None), params).all()
        self._unbumped.update(row.id for row in rows)
        return Locked(found=len(rows),
                      rows=rows if columns or held_by is not None else [],
                      held=held_by is not None and any(
                          row.held for row in rows))

    def update_providers(self, update, rows):
        """Run ``update`` (``scheduler.db.providers.RowsUpdate`` of
        providers) on ``rows``, dicts with the providers' ``id``: now, or
        on PostgreSQL as this change's stamp, by one statement that sets
        the rows, their generation and their stamp (a writer there leaves
        one version of each provider row: module docstring). The stamp
        comes last, so the UPDATE does then: a writer reads nothing it
        sets. Where it stamps more providers than ``rows`` (new ones, say),
        the UPDATE runs just before the stamp."""
        if not self._bump_at_stamp or self._provider_update is not None:
            update.run(self.session, rows)
        else:
            self._provider_update = (update, rows)

    def _stamp_by_update(self, stripe, stamped):
        """Make the deferred ``update_providers`` the stamp if it sets
        every provider to stamp (``stamped``), each locked (its generation
        not bumped yet); else run it. Did it stamp?"""
        update, rows = self._provider_update
        self._provider_update = None
        if (stamped and {row['id'] for row in rows} == set(stamped) and
                self._unbumped.issuperset(stamped) and not self._rows):
            self.session.execute(
                _stamping_update(update.statement),
                dict(update.params(rows), stamp_stripe=stripe))
            return True
        update.run(self.session, rows)
        return False

    def providers(self, provider_ids):
        """Record that these providers (or their inventories) changed."""
        self._provider_ids.update(provider_ids)

    def rows(self, table, condition):
        """Record that the rows of ``table`` matching ``condition``
        changed (aggregates, instances)."""
        self._rows.append((table, condition))

    @property
    def recorded(self):
        """Did this transaction record a change for the feed?"""
        return bool(self._provider_ids or self._rows or self._unbumped)

    def _stamp(self):
        # last, so the stripe's lock lives for these statements and the
        # COMMIT only (module docstring)
        stripe = _draw_stripe(self._rows)
        # a provider locked is stamped (its generation moves with it)
        stamped = sorted(self._provider_ids | self._unbumped)
        if (self._provider_update is not None and
                self._stamp_by_update(stripe, stamped)):
            return
        if not self.recorded:
            return
        postgresql = self._bump_at_stamp
        if postgresql and not self._rows:
            # a claim's or a report's stamp: a statement built once
            params = {'stamp_stripe': stripe, 'ids': stamped}
            if len(self._unbumped) == len(stamped):
                self.session.execute(_STAMP_AND_BUMP_PROVIDERS, params)
            else:
                # new providers among them: created at generation 0
                params['bumped'] = sorted(self._unbumped)
                self.session.execute(_STAMP_AND_BUMP_SOME_PROVIDERS,
                                     params)
            return
        if postgresql and len(self._rows) + bool(stamped) == 1:
            # one round trip: the bump as a CTE of the stamp
            table, condition = (self._rows[0] if self._rows
                                else (P, P.c.id.in_(stamped)))
            bump = _bump_statement(stripe).returning(STRIPE.c.seq).cte()
            self.session.execute(
                sa.update(table).where(condition).add_cte(bump)
                .values(feed_stripe=stripe, feed_seq=sa.select(
                    bump.c.seq).scalar_subquery())
                .execution_options(synchronize_session=False))
            return
        values = {'feed_stripe': stripe,
                  'feed_seq': _bump(self.session, stripe)}
        if self._legacy:
            values['change_seq'] = db_api.next_change_seq(self.session)
        for table, condition in self._rows:
            self.session.execute(
                sa.update(table).where(condition).values(**values)
                .execution_options(synchronize_session=False))
        if stamped:
            # a claim's or a report's stamp: a statement built once
            params = {'ids': stamped, 'stamp_stripe': stripe,
                      'stamp_seq': values['feed_seq']}
            if self._legacy:
                params['stamp_change_seq'] = values['change_seq']
            if self._unbumped:
                params['bumped'] = sorted(self._unbumped)
            self.session.execute(
                _provider_stamp(self._legacy, bool(self._unbumped)), params)


def _draw_stripe(other_rows):
    """A random stripe: one of the last ``ROW_STRIPES`` for a transaction
    that stamps aggregates or instances, one of the others otherwise."""
    if other_rows:
        return _FIRST_ROW_STRIPE + random.randrange(ROW_STRIPES)
    return random.randrange(_FIRST_ROW_STRIPE)


def draw_stripe():
    """A stripe for a transaction that stamps providers only (the claim
    routine's, ``scheduler.db.claim_routine``)."""
    return _draw_stripe(())


def lock_statement():
    """The claim routine's provider lock (PostgreSQL; bind parameter
    ``ids``), ``RETURNING``-free: ``SELECT id ... ORDER BY id FOR NO KEY
    UPDATE``. That is the row lock the ``UPDATE`` of ``lock_providers``
    takes (it changes no key column), so the two exclude each other, in
    the same order; the generation's bump waits for the routine's stamp
    (``stamp_statement``), which the routine makes under this lock. A
    claim thus writes one new version of each provider row, not two
    (each one a new entry in every index of ``providers``: the stamp's
    columns are indexed), and a claim that writes nothing has no bump to
    undo. It is the lock of ``Change.lock_providers`` on PostgreSQL. The
    routine runs the probe after it (``probe_statement``)."""
    return _select_locked((), False)


def stamp_statement():
    """PostgreSQL: the stripe's bump, the providers' stamp and their
    generation's bump in one statement (bind parameters ``stamp_stripe``
    and ``ids``), for the claim routine, whose lock bumps nothing
    (``lock_statement``)."""
    return _STAMP_AND_BUMP_PROVIDERS


def lock_update_statement():
    """MariaDB's and MySQL's provider lock (bind parameter ``ids``): the
    UPDATE that bumps the generation (``Change.lock_providers``), for the
    claim procedure (``scheduler.db.claim_procedure``)."""
    return _LOCK


def bump_by_last_insert_id_statement():
    """MariaDB's and MySQL's bump of stripe ``:bump_stripe``, its new
    value left as the connection's ``LAST_INSERT_ID()`` (``_bump``)."""
    return _BUMP_LAST_INSERT_ID


def provider_stamp_statement():
    """The stamp of providers ``:ids`` with ``:stamp_stripe`` and
    ``:stamp_seq`` where the stripe's bump is a statement of its own
    (``Change._stamp`` on MariaDB), for the claim procedure."""
    return _provider_stamp(False, False)


@dataclasses.dataclass(frozen=True)
class Locked:
    """What ``Change.lock_providers`` locked: ``found`` providers (those
    that exist); ``rows``, ``(id, *columns[, held])`` of each (in no
    particular order), if columns or the probe were asked for; ``held``,
    the probe's answer."""

    found: int
    rows: list = dataclasses.field(default_factory=list)
    held: bool = False


# The statements are built once (per variant): executing the same object
# reuses its cache key and compiled form, expanding ``ids``.
_IDS = P.c.id.in_(sa.bindparam('ids', expanding=True))
_LOCK = (sa.update(P).where(_IDS).values(generation=P.c.generation + 1)
         .execution_options(synchronize_session=False))


def _held():
    """The probe: do the consumers ``:consumers`` hold any claim?"""
    return sa.exists(sa.select(models.allocations.c.id).where(
        models.allocations.c.consumer_uuid.in_(
            sa.bindparam('consumers', expanding=True)))).label('held')


def probe_statement():
    """The probe as a statement of its own (bind parameter
    ``consumers``). The claim routine runs it after the lock: it then
    reads what was committed while the lock waited, where the lock's own
    RETURNING reads the snapshot its UPDATE began with."""
    return sa.select(_held())


@functools.lru_cache(maxsize=None)
def _lock_returning(columns, probe):
    """``_LOCK ... RETURNING id, *columns`` and, with ``probe``, whether
    the consumers ``:consumers`` hold any claim (``held``)."""
    returned = [P.c.id] + [P.c[name] for name in columns]
    if probe:
        returned.append(_held())
    return _LOCK.returning(*returned)


@functools.lru_cache(maxsize=None)
def _select_locked(columns, probe):
    """PostgreSQL: ``SELECT id, *columns[, held] ... ORDER BY id FOR NO
    KEY UPDATE``, ``generation`` as the stamp will set it (+1)."""
    returned = [P.c.id] + [
        (P.c.generation + 1).label('generation') if name == 'generation'
        else P.c[name] for name in columns]
    if probe:
        returned.append(_held())
    return (sa.select(*returned).where(_IDS).order_by(P.c.id)
            .with_for_update(key_share=True))


@functools.lru_cache(maxsize=None)
def _read_locked(columns):
    """MySQL/MariaDB: the locked rows' ``id, *columns``, read after
    ``_LOCK`` (the transaction's own change of the row, so its latest)."""
    return (sa.select(P.c.id, *[P.c[name] for name in columns])
            .where(_IDS).order_by(P.c.id))


def _bump_statement(stripe):
    return (sa.update(STRIPE).where(STRIPE.c.stripe == stripe)
            .values(seq=STRIPE.c.seq + 1))


def _stamping(update, generation=P.c.generation + 1):
    """PostgreSQL: ``update`` (an UPDATE of providers) that also bumps
    stripe ``:stamp_stripe`` and stamps the rows it sets with its new
    value (the bump as a CTE), their ``generation`` set to
    ``generation``: a change's stamp in one statement."""
    stripe = sa.bindparam('stamp_stripe', type_=sa.Integer)
    bump = (sa.update(STRIPE).where(STRIPE.c.stripe == stripe)
            .values(seq=STRIPE.c.seq + 1).returning(STRIPE.c.seq).cte())
    return (update.add_cte(bump)
            .values(feed_stripe=stripe,
                    feed_seq=sa.select(bump.c.seq).scalar_subquery(),
                    generation=generation)
            .execution_options(synchronize_session=False))


@functools.lru_cache(maxsize=None)
def _stamping_update(update):
    """``_stamping`` of a writer's statement, built once per statement
    (``Change.update_providers``)."""
    return _stamping(update)


_UPDATE_IDS = sa.update(P).where(
    P.c.id.in_(sa.bindparam('ids', expanding=True)))
_STAMP_AND_BUMP_PROVIDERS = _stamping(_UPDATE_IDS)
# the generation of a stamp that bumps only the providers ``:bumped``
# (those locked; new ones were created at 0)
_BUMPED_GENERATION = P.c.generation + sa.case(
    (P.c.id.in_(sa.bindparam('bumped', expanding=True)), 1), else_=0)
_STAMP_AND_BUMP_SOME_PROVIDERS = _stamping(
    _UPDATE_IDS, generation=_BUMPED_GENERATION)


@functools.lru_cache(maxsize=None)
def _provider_stamp(legacy, some_bumped):
    """The stamp of providers ``:ids`` where the stripe's bump is a
    statement of its own (MariaDB, SQLite, or rows of other tables
    stamped too): ``:stamp_stripe``, ``:stamp_seq`` (and
    ``:stamp_change_seq`` with the legacy counter), the generation bumped
    for the providers ``:bumped`` only if ``some_bumped``. Built once per
    form: a claim or a report batch runs it without building a statement
    or walking its cache key."""
    values = {'feed_stripe': sa.bindparam('stamp_stripe', type_=sa.Integer),
              'feed_seq': sa.bindparam('stamp_seq', type_=sa.BigInteger)}
    if legacy:
        values['change_seq'] = sa.bindparam('stamp_change_seq',
                                            type_=sa.BigInteger)
    if some_bumped:
        values['generation'] = _BUMPED_GENERATION
    return _UPDATE_IDS.values(**values).execution_options(
        synchronize_session=False)


_STRIPE_PARAM = sa.bindparam('bump_stripe', type_=sa.Integer)
_BUMP_RETURNING = _bump_statement(_STRIPE_PARAM).returning(STRIPE.c.seq)
# MariaDB has no UPDATE ... RETURNING: the new value comes back as the
# connection's LAST_INSERT_ID()
_BUMP_LAST_INSERT_ID = sa.update(STRIPE).where(
    STRIPE.c.stripe == _STRIPE_PARAM).values(
        seq=sa.func.last_insert_id(STRIPE.c.seq + 1))


def _bump(session, stripe):
    """Bump stripe ``stripe``; its new value."""
    if db_api.dialect_of(session).name == 'mysql':
        return session.execute(_BUMP_LAST_INSERT_ID,
                               {'bump_stripe': stripe}).lastrowid
    return session.execute(_BUMP_RETURNING,
                           {'bump_stripe': stripe}).scalar_one()


@contextlib.contextmanager
def write(db):
    """A write transaction that records its changes in the feed.

    Once it committed a change, it is counted in ``db.local_writes`` so
    this worker's next decision reads the feed at once, unless the writer
    set ``change.applied_in_memory`` (the worker's host table holds the
    change already: a claim confirmed by ``AssumedClaims``) or
    ``change.left_to_poller`` (a batch of tracker reports: the worker
    reads it at its next poll, within ``[scheduler] refresh_interval``,
    as every other worker does; with reports flowing all the time, a
    decision that waited for each batch read the feed on the request path
    every time, doc/source/performance-history.rst). A view that is stale by
    one poll costs a retry at most: a refusal is re-checked after a forced
    refresh, and the claim re-checks capacity in SQL.
    """
    with db.core_writer() as connection:
        change = Change(connection, db.legacy_change_counter)
        yield change
        change._stamp()
    if change.recorded and not (change.applied_in_memory
                                or change.left_to_poller):
        db.count_local_write()
