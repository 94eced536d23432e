"""Human-readable tables and JSON for the operator commands, the
``--format`` option they share, and how they report a database they
cannot use: as one line, never a traceback.

``command(subparsers, name, help=...)`` adds a subcommand that accepts
``--format table|json`` after its name too (``scheduler-manage host list
--format json``), as well as before it; ``database_error(conf, exc)`` is
the one line for an exception of ``DATABASE_ERRORS``; ``quiet_libraries()``
keeps oslo.db's own warnings (a URL without a driver name) from adding
lines of their own beside it.
"""

import argparse
import datetime
import json
import logging

import sqlalchemy.exc
from oslo_db import exception as db_exc

from scheduler.service import masking
from scheduler.service import startup_checks

FORMATS = ('table', 'json')
# what opening or querying a database raises when it cannot be used: an
# unreachable server, a bad URL, a driver that is not installed
DATABASE_ERRORS = (db_exc.DBError, sqlalchemy.exc.SQLAlchemyError,
                   ImportError)


def _cell(value):
    if value is None:
        return '-'
    if isinstance(value, float):
        return '%g' % value
    if isinstance(value, datetime.datetime):
        return value.strftime('%Y-%m-%d %H:%M:%S')
    return str(value)


def table(columns, rows):
    """``columns``: header names; ``rows``: lists of values."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells])
              for i, c in enumerate(columns)]
    line = '+' + '+'.join('-' * (w + 2) for w in widths) + '+'
    out = [line, '| ' + ' | '.join(c.ljust(w) for c, w in
                                    zip(columns, widths)) + ' |', line]
    for row in cells:
        out.append('| ' + ' | '.join(c.ljust(w) for c, w in
                                      zip(row, widths)) + ' |')
    out.append(line)
    return '\n'.join(out)


def to_json(value):
    return json.dumps(value, indent=2, sort_keys=True, default=_cell)


def _format_option():
    parent = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: when absent here, the value given before the subcommand
    # (or the top-level default) stands
    parent.add_argument('--format', choices=FORMATS,
                        default=argparse.SUPPRESS, help='output format')
    return parent


def command(subparsers, name, **kwargs):
    """``subparsers.add_parser(name)`` that also takes ``--format``."""
    return subparsers.add_parser(name, parents=[_format_option()],
                                 **kwargs)


def database_error(conf, exc):
    """One line: which database (password masked) and why."""
    return masking.mask('cannot use the database %s: %s' % (
        conf.database.connection, startup_checks.describe_error(exc)))


def quiet_libraries():
    """A command has no log: Python would print oslo.db's warnings on
    stderr as lines of their own; what is wrong is said in one line."""
    logging.getLogger('oslo_db').setLevel(logging.ERROR)
