"""A claim of new consumers in one round trip, on PostgreSQL.

On PostgreSQL a claim of consumers that hold nothing yet (nearly every
claim) is the transaction of ``scheduler.db.changes.write`` around
``scheduler.db.claims._claim``: BEGIN, the provider lock with its probe,
the conditional UPDATE of the inventories, the INSERT of the
allocations, the stripe's bump with the stamp, COMMIT. Six round trips,
each one built by SQLAlchemy in the worker and parsed and planned by the
server. Here the same statements run in the same order inside one
PL/pgSQL function, called in autocommit. That is one round trip, and the
plans are cached per connection. In-process measurement (2k hosts): the
worker's CPU per claim fell from 1.7 to 0.6 ms, and the server's from
1.35 to 0.9 ms (doc/source/performance-history.rst).

Nothing is written twice. The function's body is compiled from the
statements of ``scheduler.db.changes`` and of the transaction path: the
provider lock of ``changes.lock_statement`` (the transaction path's row
lock and order, its generation bump left to the stamp), the probe, the
fit rule of ``scheduler.model.fit.sql_fits``, and the stamp with the
generation's bump of ``changes.stamp_statement``. The one exception is
the allocations' INSERT, which is spelled out from the table's columns.
The function's name carries a digest of its definition, so a release
whose statements differ installs its own function beside the old one,
and workers of both releases keep claiming during a rolling upgrade.
``install`` creates it. ``scheduler-manage db sync`` calls it
(``scheduler.db.migration``).

An outcome other than success writes nothing and returns a negative
value: the inventory rows it took before it knew are given back inside
the same transaction (the lock bumped nothing: there is nothing else to
undo). Then the caller raises what the transaction path raises:

* -1: a provider of the claim is gone (``ClaimConflict`` names it, as
  ``claims._check_exist`` does);
* -2: the consumers hold claims (a repeat or a reschedule: the
  transaction path takes it from there);
* -3: a row does not fit (the conditional UPDATE took nothing): what
  the rows before it took is given back (``_DidNotFit``).

One claim of a consumer at a time: the function first takes a
transaction-level advisory lock on each of its consumers (in order of
their hashes, so two claims never wait on each other in a cycle; one
statement for all of them), and
asks whether the consumers hold claims (the probe) as a statement of its
own, after every lock. The function runs in autocommit, and its backend
goes on when the worker that called it dies or loses the connection:
the call the broker delivers again to another worker, or the call that
``scheduler.db.driver_calls`` sends again, may overlap it, and may have
planned other providers. It waits for the first claim, and its probe
then sees it: the consumers hold claims, the transaction path answers
with them, and one claim stands, not two (the probe inside the lock's
UPDATE read the snapshot taken before the lock waited, and missed it).
The transaction path (SQLite, PostgreSQL without the function; MariaDB
runs it inside its own procedure, ``scheduler.db.claim_procedure``)
runs in the caller's transaction, which ends with its connection.

An expected outcome is therefore no database error: there is nothing for
oslo.db to log, and no savepoint is needed (one cost 0.2 ms of the
server's CPU per claim). A deadlock is reported as the database's own
error (40P01), and ``retry_on_deadlock`` retries it as before.

A database last synced by an earlier release has no function:
``scheduler.db.claim_routines`` asks the catalog once per pool, logs a
warning, and the worker claims through the transaction path. Every
statement in the function reaches its rows by key. The function plans
with sequential scans disabled, so a cached generic plan never scans a
table whose statistics are stale, and always uses that generic plan:
left to choose, PL/pgSQL planned its statements whose parameters are
arrays again on every call (12% of the backend's CPU per claim, sampled
with ``perf``; with the single statement for the advisory locks and the
lock that bumps nothing, the backend's CPU per claim fell by 17-22%,
doc/source/performance-history.rst).
"""

import hashlib

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy.dialects import postgresql

from scheduler.db import changes
from scheduler.db import models
from scheduler.model import fit

LOG = logging.getLogger(__name__)

_ALLOC = models.allocations
_INV = models.inventories


class Gone(Exception):
    """A provider of the claim does not exist."""


class Held(Exception):
    """The consumers hold claims already."""


class DidNotFit(Exception):
    """Fewer inventory rows fit than the claim asked for."""


#: the most allocation rows a claim sends through the function: no limit
#: (its arrays are read by subscript; ``claim_procedure.MAX_ROWS``)
MAX_ROWS = None

#: the first key of the advisory locks the function takes on its
#: consumers (the second: the hash of a consumer's uuid), so that they
#: meet no other user of advisory locks in the database
CONSUMER_LOCKS = 0x5C4ED

#: what the function (and MariaDB's procedure,
#: ``scheduler.db.claim_procedure``) returns for each outcome but success
SUCCESS = 0
OUTCOMES = {Gone: -1, Held: -2, DidNotFit: -3}
RAISED = {value: outcome for outcome, value in OUTCOMES.items()}


def compiled_text(statement, dialect, variables, in_form):
    """The text of a Core statement for ``dialect`` (a ``pyformat``
    one), its bound parameters replaced: those named in ``variables`` by
    the routine's expressions given (an expanding ``IN`` by ``in_form %
    expression``), the others, which SQLAlchemy bound for literals, by
    their integer values. Shared with MariaDB's procedure
    (``scheduler.db.claim_procedure``)."""
    compiled = statement.compile(dialect=dialect)
    text = str(compiled)
    for name, value in compiled.params.items():
        if name in variables:
            text = text.replace('IN (__[POSTCOMPILE_%s])' % name,
                                in_form % variables[name])
            text = text.replace('%%(%s)s' % name, variables[name])
        elif isinstance(value, int) and not isinstance(value, bool):
            text = text.replace('%%(%s)s' % name, str(value))
        else:
            raise ValueError('parameter %s of the claim routine has no '
                             'variable' % name)
    if '__[POSTCOMPILE' in text or '%(' in text:
        raise ValueError('unbound parameter left in %s' % text)
    return text.replace('%%', '%')


def _plpgsql(statement, variables):
    """The PostgreSQL text of a Core statement, for the function's body
    (``compiled_text``; an expanding ``IN`` by ``= ANY(<array>)``)."""
    return compiled_text(statement, postgresql.psycopg2.dialect(),
                         variables, '= ANY(%s)')


def _row_and_fit():
    """The claim's conditions on one (provider, class) row: which row,
    and the rule of ``scheduler.model.fit.sql_fits`` (as ``claims._take``
    applies it to every row at once); and the amount it takes."""
    def value(name):
        return sa.bindparam(name, type_=sa.BigInteger)
    amount = value('a')
    row = sa.and_(
        _INV.c.provider_id == sa.bindparam('p', type_=sa.Integer),
        _INV.c.resource_class == sa.bindparam('rc', type_=sa.String))
    fits = fit.sql_fits(_INV, amount, (value('lo'), value('hi'),
                                       value('g')))
    return row, fits, amount


def take_statement():
    """Take the amount from the row if it fits."""
    row, fits, amount = _row_and_fit()
    return (sa.update(_INV).where(row, fits)
            .values(claimed=_INV.c.claimed + amount))


def _give_back_statement():
    """Give the amount back to the row (undoing this transaction's own
    take: no condition)."""
    row, _, amount = _row_and_fit()
    return sa.update(_INV).where(row).values(
        claimed=_INV.c.claimed - amount)


def _body():
    lock = _plpgsql(changes.lock_statement(), {'ids': '_ids'})
    probe = _plpgsql(changes.probe_statement(), {'consumers': '_consumers'})
    # the unit rules' numbers default to the amount (``claim``: a row
    # taken by one consumer)
    row = {'p': '_p[i_]', 'rc': '_rc[i_]', 'a': '_a[i_]',
           'lo': 'coalesce(_lo[i_], _a[i_])',
           'hi': 'coalesce(_hi[i_], _a[i_])',
           'g': 'coalesce(_g[i_], _a[i_])'}
    take = _plpgsql(take_statement(), row)
    give_back = _plpgsql(_give_back_statement(), dict(
        row, p='_p[j_]', rc='_rc[j_]', a='_a[j_]'))
    stamp = _plpgsql(changes.stamp_statement(),
                     {'stamp_stripe': '_stripe', 'ids': '_ids'})
    return """
DECLARE
  found_ integer;
  held_ boolean;
  rows_ integer;
BEGIN
  -- one claim of a consumer at a time, whatever its providers: the
  -- consumers' locks in the order of their keys
  PERFORM pg_advisory_xact_lock({namespace}, key_)
     FROM (SELECT DISTINCT hashtext(c) AS key_ FROM unnest(_consumers) AS c
           ORDER BY 1) AS keys;
  WITH locked AS ({lock}) SELECT count(*) INTO found_ FROM locked;
  -- after the locks: what was committed while they waited counts
  held_ := ({probe});
  IF found_ <> cardinality(_ids) OR held_ THEN
    RETURN CASE WHEN held_ THEN {held} ELSE {gone} END;
  END IF;
  FOR i_ IN 1 .. coalesce(cardinality(_p), 0) LOOP
    {take};
    GET DIAGNOSTICS rows_ = ROW_COUNT;
    IF rows_ = 0 THEN
      -- this row does not fit: give back what the rows before it took
      FOR j_ IN 1 .. i_ - 1 LOOP
        {give_back};
      END LOOP;
      RETURN {did_not_fit};
    END IF;
  END LOOP;
  IF _ac IS NULL THEN
    -- one consumer, whose allocations are the rows taken (``claim``)
    INSERT INTO {alloc} (consumer_uuid, provider_id, resource_class,
                         amount, created_at, confirmed_at)
    SELECT _consumers[1], p, rc, a, _now, NULL
      FROM unnest(_p, _rc, _a) AS rows(p, rc, a);
  ELSE
    INSERT INTO {alloc} (consumer_uuid, provider_id, resource_class,
                         amount, created_at, confirmed_at)
    SELECT c, p, rc, a, _now, NULL
      FROM unnest(_ac, _ap, _arc, _aa) AS rows(c, p, rc, a);
  END IF;
  {stamp};
  RETURN {success};
END
""".format(lock=lock, probe=probe, namespace=CONSUMER_LOCKS,
           take=take, give_back=give_back, stamp=stamp,
           gone=OUTCOMES[Gone], held=OUTCOMES[Held],
           did_not_fit=OUTCOMES[DidNotFit], alloc=_ALLOC.name,
           success=SUCCESS)


_ARGUMENTS = ('_ids integer[], _consumers varchar[], _p integer[], '
              '_rc varchar[], _a bigint[], _lo bigint[], _hi bigint[], '
              '_g bigint[], _ac varchar[], _ap integer[], _arc varchar[], '
              '_aa bigint[], _now timestamp, _stripe integer')
#: how the function plans (module docstring)
_SETTINGS = 'SET enable_seqscan = off SET plan_cache_mode = force_generic_plan'
BODY = _body()
NAME = 'scheduler_claim_%s' % hashlib.sha256(
    (_ARGUMENTS + _SETTINGS + BODY).encode()).hexdigest()[:12]
_CALL = ('SELECT %s(%%(ids)s, %%(consumers)s, %%(p)s, %%(rc)s, %%(a)s, '
         '%%(lo)s, %%(hi)s, %%(g)s, %%(ac)s, %%(ap)s, %%(arc)s, %%(aa)s, '
         '%%(now)s, %%(stripe)s)' % NAME)


def definition():
    """The CREATE statement of this release's function."""
    return ('CREATE OR REPLACE FUNCTION %s(%s) RETURNS bigint '
            'LANGUAGE plpgsql %s AS $routine$%s$routine$' % (
                NAME, _ARGUMENTS, _SETTINGS, BODY))


def install(database):
    """Create this release's function (PostgreSQL only; idempotent)."""
    if not database.is_postgresql:
        return False
    execute_definition(database, definition())
    return True


def execute_definition(database, text):
    """Run a routine's CREATE statement ``text`` on the driver's own
    cursor, given no parameters (the body's '%' is no parameter marker
    there), in a transaction of its own. The driver's errors are raised
    as they are."""
    with database.engine.begin() as connection:
        cursor = connection.connection.driver_connection.cursor()
        try:
            cursor.execute(text)
        finally:
            cursor.close()


def installed(database):
    """Is this release's function in the database (PostgreSQL)? One
    question to the catalog."""
    with database.connection() as connection:
        return connection.exec_driver_sql(
            'SELECT to_regproc(%(name)s) IS NOT NULL',
            {'name': NAME}).scalar()


def warn_missing():
    LOG.warning('The claim function %s is not in the database: claims '
                'take six round trips instead of one until "scheduler-manage '
                'db sync" creates it and the worker restarts.', NAME)


def claim(database, ids, consumers, pairs, rows, now):
    """Claim on providers ``ids`` for ``consumers``: ``pairs`` are the
    conditional UPDATE's (provider, class, amount, smallest, largest,
    gcd) rows, ``rows`` the allocations' (consumer, provider, class,
    amount). True once written; False if the function is missing (it
    said so: the caller claims the long way, ``claim_routines.lost``).
    Raises ``Gone``, ``Held`` or ``DidNotFit``, having written nothing.

    The arrays the function can derive are sent as NULL (the server
    parses every array of the call's text, 5% of its CPU per claim for
    these): the unit rules' numbers where each row is one consumer's
    (smallest = largest = gcd = the amount), and the allocations where
    the claim is one consumer's and they are the rows taken."""
    consumers = sorted(consumers)
    params = {
        'ids': sorted(ids), 'consumers': consumers,
        'p': [r[0] for r in pairs], 'rc': [r[1] for r in pairs],
        'a': [r[2] for r in pairs], 'lo': None, 'hi': None, 'g': None,
        'ac': None, 'ap': None, 'arc': None, 'aa': None,
        'now': now, 'stripe': changes.draw_stripe()}
    if any(r[3] != r[2] or r[4] != r[2] or r[5] != r[2] for r in pairs):
        params.update(lo=[r[3] for r in pairs], hi=[r[4] for r in pairs],
                      g=[r[5] for r in pairs])
    if len(consumers) != 1 or sorted(r[1:] for r in rows) != [
            r[:3] for r in pairs]:
        params.update(ac=[r[0] for r in rows], ap=[r[1] for r in rows],
                      arc=[r[2] for r in rows], aa=[r[3] for r in rows])
    try:
        # on a connection kept for it, through the driver
        # (``scheduler.db.driver_calls``)
        answer = database.driver_calls.scalar(_CALL, params)
    except db_exc.DBError as exc:
        if _sqlstate(exc) != '42883':  # undefined_function: dropped since
            raise
        warn_missing()
        return False
    if answer in RAISED:
        raise RAISED[answer]()
    return True


def _sqlstate(exc):
    """The SQLSTATE of an error oslo.db translated (None if unknown)."""
    inner = getattr(exc, 'inner_exception', None)
    return getattr(getattr(inner, 'orig', inner), 'pgcode', None)
