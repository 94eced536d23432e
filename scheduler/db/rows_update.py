"""One UPDATE of many rows, each row given its own values.

A tracker report batch sets, for each provider and each of its
inventories, values of its own (what that tracker reported). Sent as an
executemany, that is one statement per row: four per report of a compute
host (the provider and three inventories). ``RowsUpdate`` sends one
statement for all the rows, on each database in its own way::

    update = RowsUpdate(inventories, ('provider_id', 'resource_class'),
                        {'total': as_reported, 'reserved': as_reported})
    update.run(session, [{'provider_id': 1, 'resource_class': 'VCPU',
                          'total': 32, 'reserved': 0}, ...])

* **PostgreSQL**: the rows' values travel as one array per column, joined
  back with ``unnest`` (``statement``, ``params``): one statement, parsed
  and planned once whatever the number of rows. ``scheduler.db.changes``
  also folds it into the change's stamp.
* **MySQL/MariaDB**: the rows are a derived table of ``SELECT ... UNION
  ALL SELECT ...``, read first (``STRAIGHT_JOIN``) and joined to the table
  by its key, a unique index (``eq_ref``): one statement and one round
  trip per ``MYSQL_ROWS`` rows, where PyMySQL sent one per row. Measured
  on MariaDB 10.11, 3,000 reports of 10k hosts: 4.07 UPDATE statements
  per report before (doc/source/performance.rst). The statement is text
  sent with the driver's own parameters (``exec_driver_sql``, still
  under SQLAlchemy's and oslo.db's execution hooks: a deadlock is
  ``DBDeadlock``), so nothing is compiled per batch; the values are the
  plain Python values the driver escapes (numbers, text, ``datetime``,
  ``bool``, ``None``), as an executemany would send them.
* **SQLite** (one writer, in process): an executemany.

The rows are locked as the per-row statements locked them: by their
unique key, under locks of their providers that the writer took first
(``Change.lock_providers``), so the order in which the join visits them
cannot deadlock two writers.
"""

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql

from scheduler.db import api as db_api

_B = sa.bindparam
#: rows per statement on MySQL/MariaDB, and characters of text values
#: (a report's attributes are a few kB: a statement stays far below
#: ``max_allowed_packet``, 16 MB by default)
MYSQL_ROWS = 200
MYSQL_TEXT = 1 << 20


def as_reported(value):
    """The SET expression of a column that takes the row's value."""
    return value


class RowsUpdate:
    """See the module docstring: ``keys`` name the columns that find a
    row (a unique key), ``values`` map each column set to a function of
    the row's value (a SQL expression) giving what it is set to."""

    def __init__(self, table, keys, values):
        self.table = table
        self.keys = list(keys)
        self.values = dict(values)
        self.names = self.keys + list(self.values)
        self._mysql_texts = {}
        self.executemany = sa.update(table).where(*[
            table.c[k] == _B(k + '_', type_=table.c[k].type)
            for k in keys]).values(**{
                k: value(_B(k + '_', type_=table.c[k].type))
                for k, value in values.items()})
        rows = sa.func.unnest(*[
            sa.cast(_B(name + '_'), postgresql.ARRAY(table.c[name].type))
            for name in self.names]).table_valued(
                *self.names).render_derived()
        #: PostgreSQL's statement, taking ``params(rows)``
        self.statement = sa.update(table).where(*[
            table.c[k] == rows.c[k] for k in keys]).values(**{
                k: value(rows.c[k]) for k, value in values.items()})

    def params(self, rows):
        """``statement``'s parameters for ``rows``: one array per column."""
        return {name + '_': [row[name] for row in rows]
                for name in self.names}

    def run(self, session, rows):
        """Set ``rows`` (dicts keyed by column name) in ``session``'s
        transaction (an ORM session or a Core connection)."""
        if not rows:
            return
        dialect = db_api.dialect_of(session).name
        if dialect == 'postgresql':
            session.execute(self.statement, self.params(rows))
        elif dialect == 'mysql':
            connection = (session if isinstance(session, sa.engine.Connection)
                          else session.connection())
            for chunk in _chunks(rows):
                connection.exec_driver_sql(self.mysql_text(len(chunk)), tuple(
                    row[name] for row in chunk for name in self.names))
        else:
            session.execute(self.executemany, [
                {name + '_': row[name] for name in self.names}
                for row in rows])

    def mysql_text(self, count):
        """MySQL/MariaDB's statement for ``count`` rows, taking each
        row's values in ``names`` order (the driver's ``%s``); built once
        per count."""
        text = self._mysql_texts.get(count)
        if text is None:
            text = self._mysql_texts.setdefault(count, self._mysql(count))
        return text

    def _mysql(self, count):
        quote = _MYSQL.identifier_preparer.quote
        table = quote(self.table.name)
        first = 'SELECT ' + ', '.join('%%s AS %s' % quote(n)
                                      for n in self.names)
        other = 'SELECT ' + ', '.join(['%s'] * len(self.names))
        derived = ' UNION ALL '.join([first] + [other] * (count - 1))
        joined = ' AND '.join('%s.%s = v.%s' % (table, quote(k), quote(k))
                              for k in self.keys)
        sets = ', '.join('%s.%s = %s' % (table, quote(k), _mysql_sql(
            value(sa.literal_column('v.' + quote(k)))))
            for k, value in self.values.items())
        # the derived rows first, each finding its row by the unique key
        return 'UPDATE (%s) AS v STRAIGHT_JOIN %s ON %s SET %s' % (
            derived, table, joined, sets)


_MYSQL = mysql.dialect()


def _mysql_sql(expression):
    """``expression`` (of columns, no parameters) as MySQL text."""
    return str(expression.compile(dialect=_MYSQL))


def _chunks(rows):
    """``rows`` in runs of at most ``MYSQL_ROWS`` rows and about
    ``MYSQL_TEXT`` characters of text values."""
    chunk, text = [], 0
    for row in rows:
        size = sum(len(v) for v in row.values() if isinstance(v, str))
        if chunk and (len(chunk) >= MYSQL_ROWS or text + size > MYSQL_TEXT):
            yield chunk
            chunk, text = [], 0
        chunk.append(row)
        text += size
    if chunk:
        yield chunk
