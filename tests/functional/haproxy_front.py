"""HAProxy in front of a Galera cluster, as kolla-ansible deploys it: one
active writer (the first node), the others backups that take over when
its health check fails, sessions to a node marked down cut at once::

    with haproxy_front.running(cluster, tmp_path / 'haproxy') as front:
        front.url('test')      # mysql+pymysql://root@127.0.0.1:port/test

The health check is HAProxy's ``mysql-check`` with a user of its own
(``haproxy``, no password, created here), every second, two failures
mark a node down and two successes up again.
"""

import contextlib
import pathlib
import subprocess
import time

import sqlalchemy as sa

from tests.functional import galera_cluster
from tests.functional import rabbit_node

CHECK_USER = 'haproxy'


def available():
    from tests.functional import services
    return services.missing_tool('haproxy')


def require():
    """Skip the calling test if HAProxy cannot run
    here (fail it under ``CI=true``)."""
    from tests.functional import services
    services.require_here(available(), 'HAProxy')


class Front:

    def __init__(self, cluster, base_dir):
        self.cluster = cluster
        self.base_dir = pathlib.Path(base_dir)
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.port = rabbit_node.free_port()
        self.config = self.base_dir / 'haproxy.cfg'
        self.log = self.base_dir / 'haproxy.out'
        self.process = None
        servers = ['    server node%d %s:%d check inter 1s fall 2 rise 2%s'
                   % (node.index, galera_cluster.HOST, node.port,
                      '' if node.index == 0 else ' backup')
                   for node in cluster.nodes]
        self.config.write_text('\n'.join([
            'global',
            '    maxconn 2000',
            'defaults',
            '    mode tcp',
            '    timeout connect 2s',
            '    timeout client 3600s',
            '    timeout server 3600s',
            'listen galera',
            '    bind %s:%d' % (galera_cluster.HOST, self.port),
            '    option mysql-check user %s' % CHECK_USER,
            '    default-server on-marked-down shutdown-sessions',
        ] + servers + ['']))

    def url(self, database=galera_cluster.DATABASE):
        return 'mysql+pymysql://root@%s:%d/%s' % (galera_cluster.HOST,
                                                  self.port, database)

    def start(self):
        _check_user(self.cluster)
        with open(self.log, 'wb') as out:
            self.process = subprocess.Popen(
                ['haproxy', '-db', '-f', str(self.config)], stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError('haproxy exited: %s' % self.log.read_text())
            if self.writer() == 0:
                return self
            time.sleep(0.2)
        raise RuntimeError('haproxy does not reach node0')

    def writer(self):
        """The index of the node HAProxy sends connections to now, or
        None while it reaches none."""
        name = galera_cluster.value_of(
            self.url('mysql'), "SHOW VARIABLES LIKE 'wsrep_node_name'")
        return None if name is None else int(name.replace('node', ''))

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def _check_user(cluster):
    engine = sa.create_engine(cluster.nodes[0].url('mysql'),
                              poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE USER IF NOT EXISTS '%s'@'127.0.0.1'"
                             % CHECK_USER)
    engine.dispose()


@contextlib.contextmanager
def running(cluster, base_dir):
    front = Front(cluster, base_dir)
    try:
        yield front.start()
    finally:
        front.stop()
