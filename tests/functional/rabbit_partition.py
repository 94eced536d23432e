"""A network partition inside a private RabbitMQ cluster on one machine:
one node (``rabbit_cluster``) cut off from the other nodes while its
clients still reach it, as when a switch between the broker hosts fails::

    with rabbit_partition.cut_off(node):   # nftables rules in place
        ...                                # the others lose it after
                                           # net_ticktime; it pauses
    # rules gone: it sees the majority again and resumes

Every node listens on 127.0.0.1, so addresses cannot tell the nodes
apart; their group ids can (``RabbitNode.group``). The rules (a table of
their own, ``inet``, deleted on exit):

* every packet the node sends, but from its AMQP port, is dropped, and
  its connection is marked (conntrack);
* every packet of a marked connection, and every packet to the node's
  distribution port, is dropped on the way in.

So its Erlang distribution (inbound and outbound links, and epmd) carries
nothing, while its AMQP listener serves as before. Needs root, ``nft``
(Debian's ``nftables``) and a kernel with conntrack; ``available()`` says
why not. Keep epmd running before the node starts (the shared broker
runs one): an epmd the node started would carry the node's group id and
be cut off with it; ``require()`` starts one.
"""

import contextlib
import subprocess
import uuid

#: conntrack mark of the cut-off node's connections
MARK = 0x5c38


def _nft(script):
    return subprocess.run(['nft', '-f', '-'], input=script, text=True,
                          capture_output=True, timeout=30)


def available():
    """Why no partition can be made here, or None."""
    from tests.functional import services
    missing = services.missing_tool('nft', 'epmd')
    if missing:
        return missing
    name = 'sched_probe_%s' % uuid.uuid4().hex[:6]
    result = _nft('add table inet %s\nadd chain inet %s out { type filter '
                  'hook output priority 0; }\nadd rule inet %s out ct mark '
                  '%d accept\ndelete table inet %s\n' % (
                      name, name, name, MARK, name))
    if result.returncode:
        return 'nft refused a conntrack rule: %s' % result.stderr.strip()
    return None


def require():
    """Skip the calling test if no partition can be made here (fail it
    under ``CI=true``); start epmd, if none runs, under the test's own
    group id."""
    from tests.functional import services
    services.require_here(available(), 'an nftables partition')
    subprocess.run(['epmd', '-daemon'], check=True, timeout=30)


def rules(table, node):
    """The nftables script that cuts ``node`` off (module docstring)."""
    return '\n'.join([
        'table inet %s {' % table,
        '  chain out {',
        '    type filter hook output priority 0; policy accept;',
        '    meta skgid %d tcp sport != %d ct mark set %d drop' % (
            node.group, node.port, MARK),
        '  }',
        '  chain in {',
        '    type filter hook input priority 0; policy accept;',
        '    ct mark %d drop' % MARK,
        '    tcp dport %d drop' % node.dist_port,
        '  }',
        '}', ''])


@contextlib.contextmanager
def cut_off(node):
    """``node`` cut off from its cluster while the block lasts."""
    if node.group is None:
        raise ValueError('%s runs without a group of its own'
                         % node.nodename)
    table = 'sched_partition_%s' % uuid.uuid4().hex[:6]
    result = _nft(rules(table, node))
    if result.returncode:
        raise RuntimeError('nft: %s' % result.stderr)
    try:
        yield
    finally:
        subprocess.run(['nft', 'delete', 'table', 'inet', table],
                       check=True, capture_output=True, timeout=30)
