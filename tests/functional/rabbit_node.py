"""A private RabbitMQ node for functional tests: start, stop, restart.

The shared broker on 127.0.0.1:5672 is used by every other test and must
never be reconfigured or restarted. A test that needs a broker of its own
(a TLS-only listener, a broker that goes away under load) starts one with
this module: its own node name, AMQP and distribution ports, Erlang cookie
(``HOME``), mnesia, log and config files, all under one directory::

    from tests.functional import rabbit_node

    node = rabbit_node.RabbitNode(tmp_path / 'rabbit')   # plain AMQP
    node.start()                  # returns once it accepts AMQP logins
    url = node.transport_url()    # 'rabbit://guest:guest@127.0.0.1:PORT/'
    node.stop()                   # graceful (rabbitmqctl stop)
    node.start()                  # same ports, same data: queues survive
    node.kill()                   # SIGKILL, as a crash would
    node.restart()                # stop (if running), then start
    node.ctl('list_queues')       # rabbitmqctl against this node -> stdout

    tls = rabbit_node.make_tls_files(tmp_path / 'pki')  # CA, server cert
    node = rabbit_node.RabbitNode(tmp_path / 'tls', tls=tls)  # TLS only
    node.start()
    node.transport_url()          # 'rabbit://guest:guest@127.0.0.1:PORT/'
    node.ssl_options(tls.ca)      # kombu ssl dict, for a client check

As a pytest fixture (stopped at teardown, even when the test fails)::

    @pytest.fixture
    def rabbit(tmp_path):
        with rabbit_node.running(tmp_path / 'rabbit') as node:
            yield node

``available()`` says why no node can be started here (no rabbitmq-server
binary), or None. Starting takes a few seconds; ``start(timeout=...)``
raises ``NodeError`` with the tail of the node's log if it does not serve
in time. Ports are chosen free at construction and kept across restarts.
"""

import contextlib
import os
import shutil
import signal
import ssl
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from scheduler_bench import servers

SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server'
CTL = '/usr/lib/rabbitmq/bin/rabbitmqctl'
HOST = '127.0.0.1'


class NodeError(RuntimeError):
    """The private node did not start or stop as asked."""


def available():
    """Why a private node cannot run here, or None if it can."""
    for path in (SERVER, CTL):
        if not os.access(path, os.X_OK):
            return '%s not found (install rabbitmq-server)' % path
    return None


def require():
    """Skip the calling test if a private RabbitMQ node cannot run
    here (fail it under ``CI=true``)."""
    from tests.functional import services
    services.require_here(available(), 'a private RabbitMQ node')


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now (below
    the ephemeral range, ``scheduler_bench.servers.free_ports``)."""
    return servers.free_ports()


@dataclass(frozen=True)
class TlsFiles:
    """PEM files: a self-signed CA and a server key pair it signed."""
    ca: str
    cert: str
    key: str


def make_tls_files(directory, common_name='scheduler-test-ca'):
    """Generate a CA and a server certificate for 127.0.0.1/localhost
    with the openssl command; returns their paths as ``TlsFiles``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca = directory / 'ca.key', directory / 'ca.pem'
    key, csr, cert = (directory / 'server.key', directory / 'server.csr',
                      directory / 'server.pem')
    ext = directory / 'server.ext'
    ext.write_text('subjectAltName = IP:127.0.0.1, DNS:localhost\n'
                   'extendedKeyUsage = serverAuth\n')
    _openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
             '-subj', '/CN=%s' % common_name, '-keyout', ca_key, '-out', ca)
    _openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj',
             '/CN=localhost', '-keyout', key, '-out', csr)
    _openssl('x509', '-req', '-in', csr, '-CA', ca, '-CAkey', ca_key,
             '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', cert)
    return TlsFiles(ca=str(ca), cert=str(cert), key=str(key))


def _openssl(*args):
    subprocess.run(['openssl', *map(str, args)], check=True,
                   capture_output=True)


class RabbitNode:
    """One private RabbitMQ node whose files all live under ``base_dir``."""

    def __init__(self, base_dir, tls=None, name=None, group=None):
        self.base_dir = Path(base_dir)
        #: the group id the node's processes run with (None: the test's);
        #: a firewall rule can then tell its packets apart
        #: (``rabbit_partition``)
        self.group = group
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.tls = tls
        self.nodename = name or 'sched-test-%s@localhost' % (
            uuid.uuid4().hex[:8])
        self.port = free_port()
        self.dist_port = free_port()
        self.process = None
        self.log_file = self.base_dir / 'console.log'
        self._write_config()

    # -- files and environment ---------------------------------------------

    def _write_config(self):
        lines = ['loopback_users.guest = true']
        if self.tls:
            lines += ['listeners.tcp = none',
                      'listeners.ssl.default = %s:%d' % (HOST, self.port),
                      'ssl_options.cacertfile = %s' % self.tls.ca,
                      'ssl_options.certfile = %s' % self.tls.cert,
                      'ssl_options.keyfile = %s' % self.tls.key,
                      'ssl_options.verify = verify_none',
                      'ssl_options.fail_if_no_peer_cert = false']
        else:
            lines += ['listeners.tcp.default = %s:%d' % (HOST, self.port)]
        (self.base_dir / 'rabbitmq.conf').write_text('\n'.join(lines) + '\n')
        # no plugins: the shared node's management plugin holds 15672
        (self.base_dir / 'enabled_plugins').write_text('[].\n')
        (self.base_dir / 'rabbitmq-env.conf').write_text('')

    def environ(self):
        """The environment that points server and CLI at this node."""
        env = dict(os.environ)
        base = str(self.base_dir)
        env.update({
            'HOME': base,  # the Erlang cookie lives in $HOME
            'RABBITMQ_NODENAME': self.nodename,
            'RABBITMQ_NODE_IP_ADDRESS': HOST,
            'RABBITMQ_NODE_PORT': str(self.port),
            'RABBITMQ_DIST_PORT': str(self.dist_port),
            'RABBITMQ_CONF_ENV_FILE': base + '/rabbitmq-env.conf',
            'RABBITMQ_CONFIG_FILE': base + '/rabbitmq.conf',
            'RABBITMQ_ADVANCED_CONFIG_FILE': base + '/advanced.config',
            'RABBITMQ_ENABLED_PLUGINS_FILE': base + '/enabled_plugins',
            'RABBITMQ_MNESIA_BASE': base + '/mnesia',
            'RABBITMQ_LOG_BASE': base + '/log',
            'RABBITMQ_PID_FILE': base + '/rabbit.pid',
            'ERL_FLAGS': '-kernel inet_dist_use_interface {127,0,0,1}',
        })
        return env

    # -- life cycle -----------------------------------------------------------

    @property
    def running(self):
        return self.process is not None and self.process.poll() is None

    def start(self, timeout=90):
        """Start the node and wait until it accepts AMQP logins."""
        if self.running:
            return
        log = open(self.log_file, 'ab')
        self.process = subprocess.Popen(
            [SERVER], env=self.environ(), cwd=self.base_dir, stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, group=self.group)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise NodeError('RabbitMQ node %s exited with status %s:\n%s'
                                % (self.nodename, self.process.returncode,
                                   self.log_tail()))
            if self._serves():
                return
            time.sleep(0.5)
        self.kill()
        raise NodeError('RabbitMQ node %s did not serve on port %d within '
                        '%ss:\n%s' % (self.nodename, self.port, timeout,
                                      self.log_tail()))

    def _serves(self):
        import kombu
        connection = kombu.Connection(
            'amqp://guest:guest@%s:%d//' % (HOST, self.port),
            ssl=self.ssl_options(self.tls.ca) if self.tls else False,
            connect_timeout=2)
        try:
            connection.connect()
            return True
        except Exception:  # not up yet, whatever the driver says
            return False
        finally:
            connection.release()

    def stop(self, timeout=60):
        """Stop gracefully (``rabbitmqctl stop``); kill if it hangs."""
        if not self.running:
            return
        try:
            self.ctl('stop', timeout=timeout)
            self.process.wait(timeout)
        except (subprocess.SubprocessError, NodeError):
            self.kill()

    def kill(self):
        """SIGKILL the node's process group, as a crash would."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def restart(self, timeout=90):
        self.stop()
        self.start(timeout=timeout)

    def ctl(self, *args, timeout=60):
        """Run rabbitmqctl against this node; its stdout, or NodeError."""
        result = subprocess.run(
            [CTL, '-n', self.nodename, *args], env=self.environ(),
            capture_output=True, text=True, timeout=timeout)
        if result.returncode:
            raise NodeError('rabbitmqctl %s: %s%s' % (
                ' '.join(args), result.stdout, result.stderr))
        return result.stdout

    def cleanup(self):
        """Stop the node and delete its files."""
        self.stop()
        shutil.rmtree(self.base_dir, ignore_errors=True)

    # -- what clients need ---------------------------------------------------

    def transport_url(self, user='guest', password='guest', vhost=''):
        return 'rabbit://%s:%s@%s:%d/%s' % (user, password, HOST, self.port,
                                            vhost)

    @staticmethod
    def ssl_options(ca):
        """kombu/py-amqp ``ssl`` options trusting ``ca`` only."""
        return {'ca_certs': ca, 'cert_reqs': ssl.CERT_REQUIRED}

    def log_tail(self, lines=30):
        try:
            text = self.log_file.read_text(errors='replace')
        except OSError:
            return ''
        return '\n'.join(text.splitlines()[-lines:])


@contextlib.contextmanager
def running(base_dir, tls=None):
    """A started ``RabbitNode``, stopped (and its files kept) on exit."""
    node = RabbitNode(base_dir, tls=tls)
    node.start()
    try:
        yield node
    finally:
        node.stop()
