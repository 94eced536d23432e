"""A host of its own for a functional test: a network namespace joined to
this machine by a veth pair, so that a test can cut the host off the
network (``cut``/``heal``: the link goes down, nothing is killed, open
TCP connections just stop carrying anything) or slow its link
(``impair``: ``tc netem``, where the kernel has it; where it has not,
``forward(port, delay=...)`` and ``lose(percent)`` make a slow, lossy
link of their own)::

    with net_host.running('sched-a') as host:
        host.address                  # the machine, as the host sees it
        host.forward(5672)            # 127.0.0.1:5672 reachable there
        server.prefix = host.prefix   # ip netns exec <ns> ...
        host.cut(); host.heal()
        host.impair('delay 200ms loss 1%')
        host.forward(5432, delay=0.2) # 200 ms each way (``slow_link``)
        host.lose(1)                  # 1% of the packets on the link
                                      # dropped, each way (nftables)

The services of this machine listen on 127.0.0.1 only; ``forward(port)``
runs ``socat`` on the veth address, which connects to 127.0.0.1, so a
process in the namespace reaches them (and the broker sees a local
client, as its ``guest`` user requires). With ``delay``, the forwarder
is ``tests.functional.slow_link`` instead, which writes what it reads
``delay`` seconds late, each way. Needs root (``ip netns``), and
``socat`` and ``tc`` from Debian's packages; ``lose`` needs ``nft``
(``nftables``): ``services.missing_tool('nft')``.
"""

import contextlib
import os
import pathlib
import signal
import subprocess
import sys
import uuid

_SUBNETS = iter(range(1, 250))
#: the repository, where ``python -m tests.functional.slow_link`` runs
_ROOT = pathlib.Path(__file__).resolve().parents[2]


def available():
    if os.geteuid() != 0:
        return 'network namespaces need root'
    from tests.functional import services
    return services.missing_tool('ip', 'tc', 'socat')


def require():
    """Skip the calling test if a network namespace cannot run
    here (fail it under ``CI=true``)."""
    from tests.functional import services
    services.require_here(available(), 'a network namespace')


def _run(*args):
    subprocess.run(args, check=True, capture_output=True, timeout=30)


class NetHost:

    def __init__(self, name):
        tag = uuid.uuid4().hex[:6]
        self.namespace = '%s-%s' % (name, tag)
        self.outside = 'vh%s' % tag      # this machine's end
        self.inside = 'vn%s' % tag       # the host's end
        subnet = 100 + os.getpid() % 100
        self.address = '10.%d.%d.1' % (subnet, next(_SUBNETS))
        self.host_address = self.address[:-1] + '2'
        self.prefix = ('ip', 'netns', 'exec', self.namespace)
        self._forwards = []

    def start(self):
        _run('ip', 'netns', 'add', self.namespace)
        _run('ip', 'link', 'add', self.outside, 'type', 'veth', 'peer',
             'name', self.inside)
        _run('ip', 'link', 'set', self.inside, 'netns', self.namespace)
        _run('ip', 'addr', 'add', self.address + '/30', 'dev', self.outside)
        _run('ip', 'link', 'set', self.outside, 'up')
        self.run('ip', 'addr', 'add', self.host_address + '/30', 'dev',
                 self.inside)
        self.run('ip', 'link', 'set', self.inside, 'up')
        self.run('ip', 'link', 'set', 'lo', 'up')
        return self

    def run(self, *args):
        _run(*self.prefix, *args)

    def forward(self, port, delay=None):
        """Make 127.0.0.1:``port`` of this machine reachable from the
        host at ``address:port``; ``delay``: seconds each way."""
        if delay is None:
            self._forwards.append(subprocess.Popen(
                ['socat', 'TCP-LISTEN:%d,bind=%s,fork,reuseaddr' % (
                    port, self.address), 'TCP:127.0.0.1:%d' % port],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True))
            return
        forwarder = subprocess.Popen(
            [sys.executable, '-m', 'tests.functional.slow_link',
             '%s:%d' % (self.address, port), '127.0.0.1:%d' % port,
             '--delay', str(delay)], cwd=_ROOT, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True, text=True)
        self._forwards.append(forwarder)
        if forwarder.stdout.readline().strip() != 'listening':
            raise RuntimeError('slow_link did not start on port %d' % port)

    def lose(self, percent):
        """Drop ``percent`` % of the packets the host sends and of those
        it receives on its link, at random (nftables ``numgen random``
        in its namespace; TCP retransmits them, as over a lossy link)."""
        chains = ''.join(
            '  chain %s { type filter hook %s priority 0; policy accept; '
            '%s "%s" numgen random mod 1000 < %d drop; }\n' % (
                hook, hook, way, self.inside, round(percent * 10))
            for hook, way in (('input', 'iifname'), ('output', 'oifname')))
        subprocess.run([*self.prefix, 'nft', '-f', '-'], check=True,
                       input='table inet lossy {\n%s}\n' % chains,
                       text=True, capture_output=True, timeout=30)

    def cut(self):
        """Take the link down: the host and its processes live on, and
        nothing they send arrives (nor anything sent to them)."""
        _run('ip', 'link', 'set', self.outside, 'down')

    def heal(self):
        _run('ip', 'link', 'set', self.outside, 'up')

    def impair(self, netem):
        """``tc netem`` on both ends of the link, e.g. ``delay 200ms loss
        1%``: each direction gets it once."""
        words = netem.split()
        _run('tc', 'qdisc', 'replace', 'dev', self.outside, 'root', 'netem',
             *words)
        self.run('tc', 'qdisc', 'replace', 'dev', self.inside, 'root',
                 'netem', *words)

    def stop(self):
        for forward in self._forwards:
            # socat forks a process per connection: the whole group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(forward.pid, signal.SIGKILL)
            forward.wait(10)
        # the pair goes with the namespace
        subprocess.run(['ip', 'netns', 'del', self.namespace],
                       capture_output=True, timeout=30)


@contextlib.contextmanager
def running(name):
    host = NetHost(name)
    try:
        yield host.start()
    finally:
        host.stop()
