"""How a tracker names what it reports: ``host`` or ``(host, node)``.

Shared by the client library, which checks a name before it casts it, and
the RPC endpoint, which checks it again on arrival; it imports nothing but
``scheduler.exception``, so the client pays for nothing of the server.

>>> parse_name('compute-01')
('compute-01', 'compute-01')
>>> parse_name(['compute-01', 'node-a'])
('compute-01', 'node-a')
"""

from scheduler import exception


def parse_name(name):
    """``host`` or ``(host, node)`` -> ``(host, node)``; anything else
    raises ``InvalidField``."""
    if isinstance(name, str) and name:
        return name, name
    if (isinstance(name, (list, tuple)) and len(name) == 2
            and all(isinstance(p, str) and p for p in name)):
        return name[0], name[1]
    raise exception.InvalidField(
        field='name', reason='expected a host name or a [host, node] pair '
        'of non-empty strings, got %r' % (name,))
