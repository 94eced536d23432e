"""Names a caller gives things: how long they may be, which characters.

A host, a node, an aggregate, a zone, a trait, a locality or metadata key
is written to the database and into log lines. ``check_name(value,
field)`` is the one rule every such name follows: a string of 1 to
``MAX_LENGTH`` (255) characters without a control character (C0 and C1,
DEL, and the Unicode line and paragraph separators), so that a name
always fits its column and can never start a forged log line. It raises
``InvalidField`` naming ``field``, with the value cut to
``exception.ECHO_LENGTH`` characters.

How a tracker names what it reports, ``host`` or ``(host, node)``, is
``parse_name``; the client library checks a name before it casts it, the
RPC edge when the message arrives (its schemas name ``check_name``). It
imports nothing but ``scheduler.exception``, so the client pays for
nothing of the server.

>>> parse_name('compute-01')
('compute-01', 'compute-01')
>>> parse_name(['compute-01', 'node-a'])
('compute-01', 'node-a')
"""

import re

from scheduler import exception

MAX_LENGTH = 255
#: the rule in words, for the reasons of errors
RULE = '1 to %d characters, no control character' % MAX_LENGTH
#: what no name may hold: a log line holds the name as it is
_FORBIDDEN = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029]')


def name_problem(value):
    """Why ``value`` is not a name, or None if it is one."""
    if not isinstance(value, str):
        return 'expected a string, got %s' % type(value).__name__
    if not value:
        return 'must not be empty'
    if len(value) > MAX_LENGTH:
        return '%d characters, more than %d' % (len(value), MAX_LENGTH)
    bad = _FORBIDDEN.search(value)
    if bad:
        return 'control character %r at position %d' % (bad.group(),
                                                          bad.start())
    return None


def check_name(value, field):
    """``value`` if it is a name (module docstring); else InvalidField."""
    problem = name_problem(value)
    if problem:
        raise exception.InvalidField(field=field, reason=problem)
    return value


def parse_name(name):
    """``host`` or ``(host, node)`` -> ``(host, node)``; anything else,
    or a part that is not a name, raises ``InvalidField``."""
    if isinstance(name, str):
        check_name(name, 'name')
        return name, name
    if isinstance(name, (list, tuple)) and len(name) == 2 \
            and all(isinstance(part, str) for part in name):
        check_name(name[0], 'name[0]')
        check_name(name[1], 'name[1]')
        return name[0], name[1]
    raise exception.InvalidField(
        field='name', reason='expected a host name or a [host, node] pair '
        'of non-empty strings, got %s' % exception.echo(name))
