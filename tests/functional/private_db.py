"""Private PostgreSQL and MariaDB servers that a fault test may restart.

The shared servers on 127.0.0.1:5432 and :3306 serve every other test and
must never be stopped. A fault test starts its own instance, on a free
port with its data directory under the test's tmp dir::

    with private_db.running('postgresql', tmp_path / 'pg') as db:
        url = db.url               # SQLAlchemy URL of an empty database
        db.restart()               # fast shutdown, then start again
    # stopped and removed at exit, even when the test fails

``available(backend)`` says why one cannot be started here (binaries
missing), or None. As root, PostgreSQL runs as the ``postgres`` user
(``runuser``) in a directory it owns; MariaDB runs with ``--user=root``.
"""

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile

import sqlalchemy as sa
from sqlalchemy import pool

from scheduler_bench import servers
from tests import waiting

HOST = '127.0.0.1'
DB_NAME = 'scheduler'
START_TIMEOUT = 60


class DatabaseServerError(RuntimeError):
    pass


def _pg_bin(name):
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/%s' % name))
    return found[-1] if found else None


def available(backend):
    if backend == 'postgresql':
        needed = [_pg_bin('initdb'), _pg_bin('pg_ctl')]
    else:
        needed = [shutil.which('mariadb-install-db'),
                  shutil.which('mariadbd') or (
                      '/usr/sbin/mariadbd'
                      if os.path.exists('/usr/sbin/mariadbd') else None)]
    if None in needed:
        return 'no %s server binaries on this machine' % backend
    return None


def _wait_for_login(url, timeout, log_path):
    engine = sa.create_engine(url, poolclass=pool.NullPool)

    def serving():
        try:
            with engine.connect() as connection:
                connection.execute(sa.text('SELECT 1'))
        except sa.exc.DBAPIError:
            return False
        return True
    try:
        waiting.wait_for(serving, timeout, 'a login', interval=0.2)
    except AssertionError:
        raise DatabaseServerError('not serving after %ds; log:\n%s' % (
            timeout, _tail(log_path))) from None
    finally:
        engine.dispose()


def _tail(path, lines=20):
    try:
        with open(path, errors='replace') as f:
            return ''.join(f.readlines()[-lines:])
    except OSError:
        return '(no log)'


class PrivatePostgres:
    """One PostgreSQL cluster of our own (see the module docstring)."""

    def __init__(self, workdir):
        # the postgres user must reach it: pytest's tmp dirs are 0700 root
        self.workdir = tempfile.mkdtemp(prefix='sched-faults-pg-')
        self.port = servers.free_ports()
        self.data = os.path.join(self.workdir, 'data')
        self.log = os.path.join(self.workdir, 'postgres.log')
        self.url = 'postgresql+psycopg2://postgres@%s:%d/%s' % (
            HOST, self.port, DB_NAME)

    def _as_postgres(self, *argv, check=True):
        prefix = ['runuser', '-u', 'postgres', '--'] if os.getuid() == 0 \
            else []
        return subprocess.run(prefix + list(argv), capture_output=True,
                              text=True, timeout=120, check=check)

    def create(self):
        os.makedirs(self.workdir, exist_ok=True)
        if os.getuid() == 0:
            shutil.chown(self.workdir, 'postgres', 'postgres')
        self._as_postgres(_pg_bin('initdb'), '-D', self.data, '-A', 'trust',
                          '-U', 'postgres', '--no-sync')
        self.start()
        admin = self.url.rsplit('/', 1)[0] + '/postgres'
        engine = sa.create_engine(admin, poolclass=pool.NullPool,
                                  isolation_level='AUTOCOMMIT')
        with engine.connect() as connection:
            connection.execute(sa.text('CREATE DATABASE %s' % DB_NAME))
        engine.dispose()

    def start(self):
        options = '-p %d -k %s -c listen_addresses=%s -c fsync=off' % (
            self.port, self.workdir, HOST)
        self._as_postgres(_pg_bin('pg_ctl'), '-D', self.data, '-l', self.log,
                          '-o', options, '-w', 'start')
        _wait_for_login(self.url.rsplit('/', 1)[0] + '/postgres',
                        START_TIMEOUT, self.log)

    def stop(self):
        self._as_postgres(_pg_bin('pg_ctl'), '-D', self.data, '-m', 'fast',
                          '-w', 'stop', check=False)

    def restart(self):
        self.stop()
        self.start()

    def remove(self):
        shutil.rmtree(self.workdir, ignore_errors=True)


class PrivateMariaDB:
    """One MariaDB server of our own (see the module docstring)."""

    def __init__(self, workdir):
        self.workdir = str(workdir)
        self.port = servers.free_ports()
        self.data = os.path.join(self.workdir, 'data')
        self.socket = os.path.join(self.workdir, 'mysqld.sock')
        self.log = os.path.join(self.workdir, 'mariadb.log')
        self.process = None
        self.url = 'mysql+pymysql://root@%s:%d/%s' % (HOST, self.port,
                                                      DB_NAME)

    def create(self):
        os.makedirs(self.workdir, exist_ok=True)
        subprocess.run(['mariadb-install-db', '--no-defaults',
                        '--datadir=%s' % self.data, '--user=root',
                        '--auth-root-authentication-method=normal',
                        '--skip-test-db'],
                       capture_output=True, text=True, timeout=120,
                       check=True)
        self.start()
        engine = sa.create_engine(self.url.rsplit('/', 1)[0],
                                  poolclass=pool.NullPool)
        with engine.connect() as connection:
            connection.execute(sa.text('CREATE DATABASE %s' % DB_NAME))
        engine.dispose()

    def start(self):
        with open(self.log, 'ab') as log:
            self.process = subprocess.Popen(
                ['mariadbd', '--no-defaults', '--datadir=%s' % self.data,
                 '--port=%d' % self.port, '--bind-address=%s' % HOST,
                 '--socket=%s' % self.socket, '--user=root',
                 '--skip-grant-tables=0', '--innodb-flush-log-at-trx-commit=2',
                 '--pid-file=%s' % os.path.join(self.workdir, 'pid')],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        _wait_for_login(self.url.rsplit('/', 1)[0], START_TIMEOUT, self.log)

    def stop(self):
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def restart(self):
        self.stop()
        self.start()


@contextlib.contextmanager
def running(backend, workdir):
    """A created and started private server, stopped at exit."""
    cls = PrivatePostgres if backend == 'postgresql' else PrivateMariaDB
    server = cls(workdir)
    server.create()
    try:
        yield server
    finally:
        server.stop()
        if hasattr(server, 'remove'):
            server.remove()
