"""A private Galera cluster for functional tests: three MariaDB nodes on
this machine (Debian's ``mariadb-server`` and ``galera-4``), each with its
own data dir, SQL port and group-communication ports, the first
bootstrapping the cluster and the others joining it by state transfer
(rsync). Every directory above ``base_dir`` must let the nodes' user
(``RUN_AS``) through: ``base_dir()`` makes one under /tmp::

    with galera_cluster.running(tmp_path / 'galera') as cluster:
        cluster.url(0)               # mysql+pymysql://root@127.0.0.1:p0/test
        cluster.nodes[1].kill()      # SIGKILL, as a crash would
        cluster.nodes[1].start()     # it rejoins (incremental transfer)

Galera replicates by certification: writers on two nodes never wait for
each other's row locks; the loser of a conflict learns it at COMMIT, as
a deadlock error (1213).
"""

import contextlib
import os
import pathlib
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time

import sqlalchemy as sa

from tests.functional import rabbit_node

HOST = '127.0.0.1'
NODES = 3
PROVIDER = '/usr/lib/galera/libgalera_smm.so'
MARIADBD = '/usr/sbin/mariadbd'
START_TIMEOUT = 90
DATABASE = 'test'
# as root, the nodes run as Debian's mysql user: the rsync state transfer
# then runs as that user too (as root, its daemon writes as nobody)
RUN_AS = 'mysql' if os.geteuid() == 0 else pwd.getpwuid(os.geteuid())[0]


def available():
    """None if a cluster can run here, else why not."""
    for path in (PROVIDER, MARIADBD):
        if not os.path.exists(path):
            return '%s is missing (apt install galera-4 mariadb-server)' % (
                path)
    from tests.functional import services
    return services.missing_tool('mariadb-install-db', 'rsync')


def require():
    """Skip the calling test if a private Galera cluster cannot run
    here (fail it under ``CI=true``)."""
    from tests.functional import services
    services.require_here(available(), 'a private Galera cluster')


def value_of(url, statement):
    """The second column of the first row of a ``SHOW`` statement run on
    a new connection to ``url``; None if there is none, or while the
    server is unreachable."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool,
                              connect_args={'connect_timeout': 2})
    try:
        with engine.connect() as conn:
            row = conn.exec_driver_sql(statement).first()
            return row[1] if row else None
    except sa.exc.OperationalError:
        return None
    finally:
        engine.dispose()


def base_dir():
    """A new directory under /tmp that the nodes' user can reach (a
    pytest ``tmp_path`` is root's alone)."""
    path = pathlib.Path(tempfile.mkdtemp(prefix='galera-'))
    path.chmod(0o755)
    return path


def _own(path):
    if os.geteuid() == 0:
        subprocess.run(['chown', '-R', '%s:' % RUN_AS, str(path)],
                       check=True)


class GaleraNode:
    """One mariadbd of the cluster."""

    def __init__(self, base_dir, index, ports, cluster_address):
        self.base_dir = pathlib.Path(base_dir)
        self.index = index
        self.port, self.gcomm_port, self.ist_port, self.sst_port = ports
        self.process = None
        self.config = self.base_dir / 'my.cnf'
        self.datadir = self.base_dir / 'data'
        self.log = self.base_dir / 'error.log'
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.config.write_text('\n'.join([
            '[mysqld]',
            'user = %s' % RUN_AS,
            'datadir = %s' % self.datadir,
            'socket = %s' % (self.base_dir / 'mysqld.sock'),
            'pid-file = %s' % (self.base_dir / 'mysqld.pid'),
            'log-error = %s' % self.log,
            'port = %d' % self.port,
            'bind-address = %s' % HOST,
            'skip-name-resolve',
            'binlog_format = ROW',
            'default_storage_engine = InnoDB',
            'innodb_autoinc_lock_mode = 2',
            'innodb_buffer_pool_size = 64M',
            'innodb_flush_log_at_trx_commit = 2',
            'wsrep_on = ON',
            'wsrep_provider = %s' % PROVIDER,
            'wsrep_cluster_name = scheduler-test',
            'wsrep_cluster_address = %s' % cluster_address,
            'wsrep_node_name = node%d' % index,
            'wsrep_node_address = %s:%d' % (HOST, self.gcomm_port),
            'wsrep_node_incoming_address = %s:%d' % (HOST, self.port),
            'wsrep_sst_method = rsync',
            'wsrep_sst_receive_address = %s:%d' % (HOST, self.sst_port),
            'wsrep_provider_options = "gmcast.listen_addr=tcp://%s:%d; '
            'ist.recv_addr=%s:%d; gcache.size=64M; '
            'evs.suspect_timeout=PT3S; evs.inactive_timeout=PT6S; '
            'evs.install_timeout=PT4S"' % (HOST, self.gcomm_port, HOST,
                                            self.ist_port),
            '']))

    def url(self, database=DATABASE):
        return 'mysql+pymysql://root@%s:%d/%s' % (HOST, self.port, database)

    def install(self):
        _own(self.base_dir)
        subprocess.run(
            ['mariadb-install-db', '--defaults-file=%s' % self.config,
             '--auth-root-authentication-method=normal',
             '--skip-test-db'],
            check=True, capture_output=True, timeout=120)

    def start(self, bootstrap=False):
        """Start the node; one that crashed first recovers its position
        from its own data, as Debian's service does (``galera_recovery``),
        so that it catches up by incremental transfer from the others'
        caches, not by a full state transfer that blocks its donor."""
        assert self.process is None or self.process.poll() is not None
        args = [MARIADBD, '--defaults-file=%s' % self.config]
        if bootstrap:
            args.append('--wsrep-new-cluster')
        position = self._recovered_position()
        if position:
            args.append('--wsrep_start_position=%s' % position)
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        return self

    def _recovered_position(self):
        grastate = self.datadir / 'grastate.dat'
        if not grastate.exists() or 'seqno:   -1' not in grastate.read_text():
            return None
        log = self.base_dir / 'recover.log'
        subprocess.run([MARIADBD, '--defaults-file=%s' % self.config,
                        '--wsrep-recover', '--log-error=%s' % log],
                       capture_output=True, timeout=120)
        found = re.search(r'Recovered position: (\S+)',
                          log.read_text(errors='replace'))
        return found.group(1) if found else None

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)

    def stop(self):
        """Shut down cleanly (SIGTERM): the node records its position."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(60)

    def status(self, name):
        """A ``wsrep_*`` status variable, or None while unreachable."""
        return value_of(self.url('mysql'), "SHOW STATUS LIKE '%s'" % name)

    def wait_synced(self, size, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('node%d exited (%s):\n%s' % (
                    self.index, self.process.returncode, self.tail()))
            if (self.status('wsrep_local_state_comment') == 'Synced'
                    and self.status('wsrep_cluster_size') == str(size)):
                return
            time.sleep(0.3)
        raise RuntimeError('node%d not synced in a cluster of %d after %d s:'
                           '\n%s' % (self.index, size, timeout, self.tail()))

    def tail(self, lines=30):
        try:
            text = self.log.read_text(errors='replace')
        except FileNotFoundError:
            return '(no log)'
        return '\n'.join(text.splitlines()[-lines:])


class GaleraCluster:

    def __init__(self, path, size=NODES):
        self.base_dir = pathlib.Path(path)
        ports = [tuple(rabbit_node.free_port() for _ in range(4))
                 for _ in range(size)]
        address = 'gcomm://%s' % ','.join(
            '%s:%d' % (HOST, p[1]) for p in ports)
        self.nodes = [GaleraNode(self.base_dir / ('node%d' % i), i,
                                 ports[i], address)
                      for i in range(size)]

    def start(self):
        """Bootstrap the first node; the others join it by state
        transfer (rsync)."""
        first = self.nodes[0]
        first.install()
        first.start(bootstrap=True)
        first.wait_synced(1)
        engine = sa.create_engine(first.url('mysql'),
                                  poolclass=sa.pool.NullPool)
        with engine.begin() as conn:
            conn.exec_driver_sql('CREATE DATABASE IF NOT EXISTS %s'
                                 % DATABASE)
        engine.dispose()
        for count, node in enumerate(self.nodes[1:], start=2):
            node.datadir.mkdir(parents=True, exist_ok=True)
            _own(node.base_dir)
            node.start()
            node.wait_synced(count)
        return self

    def stop(self):
        for node in self.nodes:
            node.kill()

    def url(self, index):
        return self.nodes[index].url()

    def tail(self):
        return '\n'.join('--- node%d\n%s' % (n.index, n.tail())
                         for n in self.nodes)


@contextlib.contextmanager
def running(path=None, size=NODES):
    """A started cluster under ``path`` (default: a new ``base_dir()``,
    removed afterwards)."""
    own_dir = path is None
    cluster = GaleraCluster(base_dir() if own_dir else path, size)
    try:
        yield cluster.start()
    except BaseException:
        print(cluster.tail())
        raise
    finally:
        cluster.stop()
        if own_dir:
            shutil.rmtree(cluster.base_dir, ignore_errors=True)
