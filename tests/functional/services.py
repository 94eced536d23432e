"""Are RabbitMQ, PostgreSQL and MariaDB up on 127.0.0.1?

``require(name)`` checks a service once per test session (a TCP connect,
then a real login) and, if it is not usable, skips the calling test with
the command that starts it, or fails it when ``CI=true``: CI must never
pass by skipping.
"""

import contextlib
import fcntl
import functools
import os
import pathlib
import shutil
import socket
import tempfile

import kombu
import pytest
import sqlalchemy as sa
from sqlalchemy import pool

HOST = '127.0.0.1'
RABBIT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'
ADMIN_URLS = {
    'postgresql': 'postgresql+psycopg2://postgres@127.0.0.1/test',
    'mariadb': 'mysql+pymysql://root@127.0.0.1/test',
}
PORTS = {'rabbitmq': 5672, 'postgresql': 5432, 'mariadb': 3306}
START_COMMANDS = {
    'rabbitmq': 'rabbitmq-server -detached',
    'postgresql': 'pg_ctlcluster --skip-systemctl-redirect '
                  '$(ls /etc/postgresql) main start',
    'mariadb': 'start-stop-daemon --start --oknodo --background '
               '--exec /usr/sbin/mariadbd',
}


def _tcp(port):
    with socket.create_connection((HOST, port), timeout=3):
        pass


def _login_rabbitmq():
    connection = kombu.Connection('amqp://guest:guest@127.0.0.1:5672//',
                                  connect_timeout=5)
    try:
        connection.connect()
    finally:
        connection.release()


def _login_database(name):
    engine = sa.create_engine(ADMIN_URLS[name], poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(sa.text('SELECT 1'))
    finally:
        engine.dispose()


@functools.cache
def problem(name):
    """Why service ``name`` is unusable, or None if it is fine."""
    try:
        _tcp(PORTS[name])
        if name == 'rabbitmq':
            _login_rabbitmq()
        else:
            _login_database(name)
    except Exception as exc:  # any error means "not usable"
        return '%s: %s' % (type(exc).__name__, exc)
    return None


#: held by a test while it runs a cluster of its own (``one_cluster``)
CLUSTER_LOCK = pathlib.Path(tempfile.gettempdir()) / (
    'openstack-scheduler-cluster-tests.lock')


@contextlib.contextmanager
def one_cluster():
    """Held while a test runs a cluster of its own (three RabbitMQ or
    Galera nodes, a host in a network namespace): the test processes
    take turns, so that such tests do not run at once on a machine of
    two cores (a Galera cluster's start beside a RabbitMQ cluster's
    failover test starved the broker nodes in CI: 72 s to reconnect)."""
    with open(CLUSTER_LOCK, 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def missing_tool(*tools):
    """Why a test cannot start its own processes here: the first of
    ``tools`` not on the PATH (a Debian package's command), or None."""
    for tool in tools:
        if shutil.which(tool) is None:
            return '%s is missing' % tool
    return None


def require_here(why, what):
    """For a test that starts ``what`` itself (a private broker node, a
    Galera cluster, a network namespace): ``why`` it cannot here, or
    None. Skip the calling test then, or fail it under ``CI=true``,
    where it must run."""
    if why is None:
        return
    if os.environ.get('CI') == 'true':
        pytest.fail('%s is required in CI: %s' % (what, why), pytrace=False)
    pytest.skip('cannot start %s: %s' % (what, why))


def require(name):
    """Skip (or, with CI=true, fail) the current test if ``name`` is down."""
    why = problem(name)
    if why is None:
        return
    where = '%s on %s:%d' % (name, HOST, PORTS[name])
    if os.environ.get('CI') == 'true':
        pytest.fail('%s is required in CI but is not usable (%s); the CI '
                    'script must start it: %s'
                    % (where, why, START_COMMANDS[name]), pytrace=False)
    pytest.skip('%s is not usable (%s); start it with: %s'
                % (where, why, START_COMMANDS[name]))
