"""Which routine a database's claims go through, if any.

* PostgreSQL: the claim function (``scheduler.db.claim_routine``), one
  round trip in autocommit;
* MariaDB: the claim procedure (``scheduler.db.claim_procedure``),
  ``CALL`` and ``COMMIT``, for claims of at most its ``MAX_ROWS``
  allocation rows;
* SQLite, MySQL, and any database under ``[database]
  legacy_change_counter`` (whose stamp the routines do not write): none,
  the transaction path of ``scheduler.db.claims``.

``scheduler-manage db sync`` installs the routine (``install``), the
upgrade check asks for it (``installed``), and ``claims`` calls it while
it is there (``of``, until a call finds it gone: ``lost``); the routines
raise the outcomes of
``claim_routine`` (``Gone``, ``Held``, ``DidNotFit``).
"""

import weakref

from scheduler.db import claim_procedure
from scheduler.db import claim_routine

#: database -> is its routine there (claims go the long way if not)
_PRESENT = weakref.WeakKeyDictionary()


def _routine_of(database):
    if database.is_postgresql:
        return claim_routine
    # the procedure is MariaDB's dialect (``TYPE OF``, ``JSON_VALUE``)
    if _is_mariadb(database):
        return claim_procedure
    return None


def _is_mariadb(database):
    """Is the server MariaDB (not MySQL)? SQLAlchemy's MySQL dialect
    learns it from the server when it first connects."""
    dialect = database.engine.dialect
    if dialect.name != 'mysql':
        return False
    if dialect.server_version_info is None:
        with database.engine.connect():
            pass
    return bool(dialect.is_mariadb)


def of(database, rows=1):
    """The routine module a claim of ``rows`` allocation rows on
    ``database`` goes through now, or None (the transaction path).
    Whether it is there is asked of the catalog once per pool; a missing
    routine is logged once."""
    routine = _routine_of(database)
    if routine is None or database.legacy_change_counter or (
            routine.MAX_ROWS is not None and rows > routine.MAX_ROWS):
        return None
    present = _PRESENT.get(database)
    if present is None:
        present = _PRESENT[database] = routine.installed(database)
        if not present:
            routine.warn_missing()
    return routine if present else None


def lost(database):
    """The routine's call found it gone (dropped since, or not allowed):
    claims take the transaction path from now on."""
    _PRESENT[database] = False


def install(database):
    """Create this release's routine where the database has one; whether
    it did."""
    routine = _routine_of(database)
    if routine is None:
        return False
    _PRESENT[database] = routine.install(database)
    return _PRESENT[database]


def installed(database):
    """Is this release's routine there? True where none applies."""
    routine = _routine_of(database)
    return routine is None or routine.installed(database)


def name(database):
    """The name of this release's routine on ``database`` (None: none)."""
    routine = _routine_of(database)
    return routine.NAME if routine is not None else None
