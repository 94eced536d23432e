"""Fixtures: services, a fresh database, and scheduler-server processes.

Tests parametrize ``backend`` ('sqlite', 'postgresql', 'mariadb') and ask
for ``scheduler``, a factory that starts ``scheduler-server`` on a new
database of that backend::

    @pytest.mark.parametrize('backend', databases.BACKENDS)
    def test_something(scheduler):
        server = scheduler(workers=2)
        client = server.client()

Teardown stops every server with SIGTERM and fails the test unless it
exited 0; when a test failed, the tail of each server log is printed.
``database`` is the db layer in process on a fresh database of ``backend``.
``summary_line`` (``tests/conftest.py``) adds a line to the terminal
summary (race figures). ``one_cluster_fault_at_a_time`` keeps the fault
tests of the cluster topology (Galera, the RabbitMQ cluster, a cut
scheduler host) from running at the same time in two test processes.
"""

import fcntl
import os
import tempfile

import pytest

from scheduler import conf as sched_conf
from scheduler.db import api as db_api
from scheduler.db import migration
from tests.functional import databases
from tests.functional import server as server_mod
from tests.functional import services
from tests.functional import shared_broker


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, 'report_' + report.when, report)
    return report


def pytest_sessionfinish(session):
    """This test process's vhost goes with it (``shared_broker``)."""
    shared_broker.remove_vhost()


@pytest.fixture(scope='module')
def one_cluster_fault_at_a_time():
    """Held while a test process runs a module's tests, its clusters'
    start included (a module asks for it first, with ``usefixtures``):
    the cluster fault tests time every call against 10 s, and two of
    them at once on the suite's 2 cores starve each other's clusters (a
    Galera node taking 23 s to rejoin instead of 11, its writer refusing
    statements for 5 s, a call waiting 10.3 s, in one CI run). Other
    tests go on in the other test processes; a process holds one such
    lock at a time (pytest ends a module's fixtures before the next
    module's begin), so none waits on another in a circle."""
    path = os.path.join(tempfile.gettempdir(),
                        'scheduler-tests-cluster-faults.lock')
    with open(path, 'a') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def rabbitmq():
    services.require('rabbitmq')


@pytest.fixture
def database_url(backend, tmp_path):
    with databases.fresh_database(backend, tmp_path) as url:
        yield url


def _database(database_url):
    """A ``scheduler.db.api.Database`` on ``database_url``, synced."""
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('connection', database_url, 'database')
    db = db_api.Database(conf)
    migration.db_sync(db)
    return db


def _sync_schema(database_url):
    _database(database_url).dispose()


@pytest.fixture
def database(backend, database_url):
    """A ``scheduler.db.api.Database`` on a fresh, synced database of
    ``backend``, for tests that call the db layer in process."""
    db = _database(database_url)
    yield db
    db.dispose()


@pytest.fixture
def scheduler(request, tmp_path, rabbitmq, database_url):
    """Factory: ``scheduler(workers=2, options={group: {opt: value}})``
    syncs the schema, starts scheduler-server and waits until every
    worker serves. All servers of a test share its database, synced
    once, in this process (``scheduler-manage db sync`` itself is run by
    the tests of the operator commands and of upgrades)."""
    servers = []

    def start(workers=2, options=None):
        workdir = tmp_path / ('scheduler-%d' % len(servers))
        server = server_mod.SchedulerServer(workdir, database_url, workers,
                                            options)
        if not servers:
            _sync_schema(database_url)
        servers.append(server)
        return server.start().wait_ready()

    yield start

    report = getattr(request.node, 'report_call', None)
    errors = []
    for server in servers:
        try:
            server.close()
        except (Exception, pytest.fail.Exception) as exc:
            errors.append(str(exc))
        if report is not None and report.failed:
            print(server.tail())
    if errors:
        pytest.fail('\n'.join(errors), pytrace=False)
