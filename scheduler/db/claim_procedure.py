"""A claim of new consumers in two round trips, on MariaDB.

On MariaDB a claim of consumers that hold nothing yet (nearly every
claim) is the transaction path of ``scheduler.db.claims``: the read of
the consumers' previous claims, the provider lock, the conditional
UPDATE of the inventories, the INSERT of the allocations, the stripe's
bump and the providers' stamp, then COMMIT. Seven round trips, each one
built by SQLAlchemy and parsed by PyMySQL (pure Python) in the worker:
1.1 ms of the worker's CPU per claim, against 0.12 ms for PostgreSQL's
claim function, measured in process (``decisions/claims.rst``). Here the
same statements run in the same order inside one stored procedure,
called in the caller's transaction: ``CALL`` and ``COMMIT``.

It is PostgreSQL's claim function (``scheduler.db.claim_routine``) for
this database, with one difference that follows from where it runs: the
procedure runs inside the worker's transaction, not in autocommit. A
worker that dies or loses its connection mid-call leaves a transaction
that the server rolls back, as it would the transaction path's; so the
procedure needs no consumer locks, and its probe is the transaction
path's read of previous claims: a consistent read, before the lock
(``claims._lock_claimed`` on MariaDB; ``SELECT ... INTO``, where a
``SET`` from a subquery would take shared next-key locks on the consumer
index). Success answers nothing (no result set for the driver to
parse); any other outcome answers a negative value, and the caller
rolls the whole transaction back: nothing is given back by hand.

Nothing is written twice: the body is compiled from the statements of
``scheduler.db.changes`` (the probe, the lock's UPDATE, the stripe's
bump by ``LAST_INSERT_ID``, the providers' stamp) and of the claim
function (the conditional UPDATE with the fit rule of
``scheduler.model.fit.sql_fits``), for the MySQL dialect. The lists
arrive as JSON texts and are read element by element into local
variables typed as their columns (``TYPE OF``: the columns' own
character set and collation, whatever the database's default), so every
statement reaches its row by primary key (or the consumer index); the
providers are locked one by one in ascending id order, the order the
transaction path's ``IN`` list walks. The name carries a digest of the
definition, so a release whose statements differ installs its own
procedure beside the old one, and workers of both releases keep claiming
during a rolling upgrade. ``scheduler-manage db sync`` creates it
(``install``). Each element read parses its list again, so a claim of
more than ``MAX_ROWS`` allocation rows (dozens of instances) takes the
transaction path, whose INSERT is one statement. On a Galera cluster its
writes are certified at COMMIT like any other transaction's: a
certification failure is a deadlock error there, and
``retry_on_deadlock`` retries the claim whole.
"""

import hashlib
import json

import sqlalchemy as sa
from oslo_db import exception as db_exc
from oslo_log import log as logging
from sqlalchemy.dialects import mysql

from scheduler.db import changes
from scheduler.db import claim_routine
from scheduler.db import models

LOG = logging.getLogger(__name__)

#: MariaDB's errors for a procedure that does not exist, or does already
_NO_SUCH_PROCEDURE, _ALREADY_EXISTS = 1305, 1304
#: MariaDB's errors for a privilege the user lacks to create a routine
#: (a database user granted less than ALL on its database) or to call it
_DENIED = frozenset({1044, 1227, 1370})
_DIALECT = mysql.pymysql.dialect(paramstyle='pyformat')


def _mysql(statement, variables):
    """The MySQL text of a Core statement for the procedure's body
    (``claim_routine.compiled_text``; an expanding ``IN`` by ``=
    <variable>``: one row per statement)."""
    return claim_routine.compiled_text(statement, _DIALECT, variables,
                                       '= %s')


def _insert_statement():
    def value(name, type_):
        return sa.bindparam(name, type_=type_)
    return sa.insert(models.allocations).values(
        consumer_uuid=value('c', sa.String), provider_id=value('p',
                                                               sa.Integer),
        resource_class=value('rc', sa.String), amount=value('a',
                                                            sa.BigInteger),
        created_at=value('now', sa.DateTime), confirmed_at=sa.null())


def _element(doc, index, *more):
    """The JSON path of element ``index`` (then ``more``) of ``doc``."""
    path = "CONCAT('$[', %s, ']%s')" % (index, ''.join(
        '[%d]' % m for m in more))
    return 'JSON_VALUE(%s, %s)' % (doc, path)


def _body():
    probe = _mysql(changes.probe_statement(), {'consumers': 'c_'})
    lock = _mysql(changes.lock_update_statement(), {'ids': 'id_'})
    row = {'p': 'p_', 'rc': 'rc_', 'a': 'a_', 'lo': 'lo_', 'hi': 'hi_',
           'g': 'g_'}
    take = _mysql(claim_routine.take_statement(), row)
    insert = _mysql(_insert_statement(), {'c': 'c_', 'p': 'p_',
                                          'rc': 'rc_', 'a': 'a_',
                                          'now': '_now'})
    bump = _mysql(changes.bump_by_last_insert_id_statement(),
                  {'bump_stripe': '_stripe'})
    stamp = _mysql(changes.provider_stamp_statement(),
                   {'ids': 'id_', 'stamp_stripe': '_stripe',
                    'stamp_seq': 'seq_'})
    return """
BEGIN
  DECLARE i_ INT DEFAULT 0;
  DECLARE n_ INT DEFAULT 0;
  DECLARE found_ INT DEFAULT 0;
  DECLARE held_ INT DEFAULT 0;
  DECLARE id_ INT;
  DECLARE c_ TYPE OF {alloc}.consumer_uuid;
  DECLARE p_ INT;
  DECLARE rc_ TYPE OF {inv}.resource_class;
  DECLARE a_ BIGINT;
  DECLARE lo_ BIGINT;
  DECLARE hi_ BIGINT;
  DECLARE g_ BIGINT;
  DECLARE seq_ BIGINT;
  claim_: BEGIN
    -- the probe: the transaction path's read, before the lock
    SET n_ = JSON_LENGTH(_consumers);
    WHILE i_ < n_ AND NOT held_ DO
      SET c_ = {consumer};
      -- SELECT ... INTO: a consistent read, as the transaction path's
      -- (SET x = (SELECT ...) would take shared next-key locks on the
      -- consumer index, and two claims whose new consumers fall in one
      -- gap would deadlock on their INSERTs: scheduler.db.changes)
      {probe} INTO held_;
      SET i_ = i_ + 1;
    END WHILE;
    IF held_ THEN
      SELECT {held};
      LEAVE claim_;
    END IF;
    -- the providers' lock, one by one in ascending id order
    SET i_ = 0;
    SET n_ = JSON_LENGTH(_ids);
    WHILE i_ < n_ DO
      SET id_ = {provider_id};
      {lock};
      SET found_ = found_ + ROW_COUNT();
      SET i_ = i_ + 1;
    END WHILE;
    IF found_ <> n_ THEN
      SELECT {gone};
      LEAVE claim_;
    END IF;
    SET i_ = 0;
    SET n_ = JSON_LENGTH(_rows);
    WHILE i_ < n_ DO
      SET p_ = {row_p}, rc_ = {row_rc}, a_ = {row_a}, lo_ = {row_lo},
          hi_ = {row_hi}, g_ = {row_g};
      {take};
      IF ROW_COUNT() = 0 THEN
        -- the caller rolls back what the rows before it took
        SELECT {did_not_fit};
        LEAVE claim_;
      END IF;
      SET i_ = i_ + 1;
    END WHILE;
    SET i_ = 0;
    SET n_ = JSON_LENGTH(_allocations);
    WHILE i_ < n_ DO
      SET c_ = {alloc_c}, p_ = {alloc_p}, rc_ = {alloc_rc},
          a_ = {alloc_a};
      {insert};
      SET i_ = i_ + 1;
    END WHILE;
    {bump};
    SET seq_ = LAST_INSERT_ID();
    SET i_ = 0;
    SET n_ = JSON_LENGTH(_ids);
    WHILE i_ < n_ DO
      SET id_ = {provider_id};
      {stamp};
      SET i_ = i_ + 1;
    END WHILE;
    -- success answers no result set: the driver parses none
  END claim_;
END""".format(
        alloc=models.allocations.name, inv=models.inventories.name,
        probe=probe, lock=lock, take=take, insert=insert, bump=bump,
        stamp=stamp, consumer=_element('_consumers', 'i_'),
        provider_id=_element('_ids', 'i_'),
        row_p=_element('_rows', 'i_', 0), row_rc=_element('_rows', 'i_', 1),
        row_a=_element('_rows', 'i_', 2), row_lo=_element('_rows', 'i_', 3),
        row_hi=_element('_rows', 'i_', 4), row_g=_element('_rows', 'i_', 5),
        alloc_c=_element('_allocations', 'i_', 0),
        alloc_p=_element('_allocations', 'i_', 1),
        alloc_rc=_element('_allocations', 'i_', 2),
        alloc_a=_element('_allocations', 'i_', 3),
        held=claim_routine.OUTCOMES[claim_routine.Held],
        gone=claim_routine.OUTCOMES[claim_routine.Gone],
        did_not_fit=claim_routine.OUTCOMES[claim_routine.DidNotFit])


_ARGUMENTS = ('IN _ids LONGTEXT, IN _consumers LONGTEXT, IN _rows LONGTEXT, '
              'IN _allocations LONGTEXT, IN _now DATETIME(6), IN _stripe INT')
#: it runs with its caller's privileges: no call depends on the account
#: that ran ``db sync`` still existing
_CHARACTERISTICS = 'MODIFIES SQL DATA SQL SECURITY INVOKER'
BODY = _body()
NAME = 'scheduler_claim_%s' % hashlib.sha256(
    (_ARGUMENTS + _CHARACTERISTICS + BODY).encode()).hexdigest()[:12]
#: the most allocation rows a claim sends through the procedure: it reads
#: its JSON lists element by element, each read parsing the list again,
#: so a claim of hundreds of instances is faster the transaction path's
#: way (one multi-row INSERT)
MAX_ROWS = 48
_CALL = ('CALL %s(%%(ids)s, %%(consumers)s, %%(rows)s, %%(allocations)s, '
         '%%(now)s, %%(stripe)s)' % NAME)


def definition():
    """The CREATE statement of this release's procedure."""
    return 'CREATE PROCEDURE %s(%s) %s %s' % (NAME, _ARGUMENTS,
                                              _CHARACTERISTICS, BODY)


def install(database):
    """Create this release's procedure if it is not there (its name
    carries the digest of its definition: one that is there is this one,
    and is never replaced under running workers). A user not allowed to
    create routines (``CREATE ROUTINE``) gets a warning, not an error:
    its claims take the transaction path."""
    if installed(database):
        return True
    try:
        claim_routine.execute_definition(database, definition())
    except database.engine.dialect.loaded_dbapi.Error as exc:
        # the driver's own error: its cursor, not SQLAlchemy's, ran it
        if _error_code(exc) == _ALREADY_EXISTS:
            return True     # another db sync created it meanwhile
        if _error_code(exc) not in _DENIED:
            raise
        LOG.warning('The claim procedure %s was not created: %s. Claims '
                    'take seven round trips instead of two until a user '
                    'with the CREATE ROUTINE privilege on the database '
                    'runs "scheduler-manage db sync".', NAME, exc)
        return False
    return True


def installed(database):
    """Is this release's procedure in the database? One question to the
    catalog."""
    with database.connection() as connection:
        return bool(connection.exec_driver_sql(
            'SELECT COUNT(*) FROM information_schema.routines WHERE '
            'routine_schema = DATABASE() AND routine_name = %(name)s',
            {'name': NAME}).scalar())


def warn_missing():
    """Say once that claims take the long way for want of it."""
    LOG.warning('The claim procedure %s is not in the database, or this '
                'user may not call it: claims take seven round trips '
                'instead of two until '
                '"scheduler-manage db sync" creates it and the worker '
                'restarts.', NAME)


def claim(database, ids, consumers, pairs, rows, now):
    """As ``claim_routine.claim``, on MariaDB: in a transaction of its
    own, committed on success and rolled back on any other outcome
    (raised as ``Gone``, ``Held`` or ``DidNotFit``, having written
    nothing). False if the procedure is missing or the user may not call
    it (it said so: the caller claims the long way,
    ``claim_routines.lost``)."""
    params = {'ids': json.dumps(sorted(ids)),
              'consumers': json.dumps(sorted(consumers)),
              'rows': json.dumps(pairs), 'allocations': json.dumps(rows),
              'now': now, 'stripe': changes.draw_stripe()}
    try:
        # on a connection kept for it, through the driver
        # (``scheduler.db.driver_calls``); success answers nothing and
        # is committed, an outcome is a one-row result set, rolled back
        answer = database.driver_calls.transaction(
            _CALL, params, keep=_succeeded)
    except (db_exc.DBError, sa.exc.DBAPIError) as exc:
        if _error_code(exc) not in _DENIED | {_NO_SUCH_PROCEDURE}:
            raise
        warn_missing()
        return False
    if answer in claim_routine.RAISED:
        raise claim_routine.RAISED[answer]()
    return True


def _succeeded(answer):
    return answer is None


def _error_code(exc):
    """MySQL's error number of a database error, as SQLAlchemy raised it
    or oslo.db translated it (None if unknown)."""
    inner = getattr(exc, 'inner_exception', exc)
    args = getattr(getattr(inner, 'orig', inner), 'args', ())
    return args[0] if args and isinstance(args[0], int) else None
