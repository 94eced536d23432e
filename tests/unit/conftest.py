"""Shared fixtures of the unit tests: a private config and a SQLite file.

Nothing here starts a service: the database is a SQLite file in pytest's
``tmp_path`` and RPC, where a test needs it, uses the in-process
``kombu+memory`` transport.
"""

import logging

import pytest

from scheduler import conf as sched_conf
from scheduler import manager as manager_mod
from scheduler.rpc import messaging
from scheduler.db import api as db_api
from scheduler.db import migration
from scheduler.service import composition


@pytest.fixture(autouse=True)
def root_logger_restored():
    """A test that sets the process's logging up (``oslo_log.setup``, as
    ``scheduler-server`` and a reload do) leaves handlers on the root
    logger that write to its own captured stream, which pytest closes
    afterwards: a later test of the same process that logs then prints
    "Logging error" on the real stderr (seen in CI, failing the commands'
    tests that check stderr is empty). Each test gets the root logger
    back as it found it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture
def conf(tmp_path):
    """A fresh ConfigOpts with every option at its default, no files read,
    pointing at a SQLite file of its own and the in-process transport."""
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('connection',
                      'sqlite:///' + str(tmp_path / 'scheduler.sqlite'),
                      'database')
    conf.set_override('transport_url', messaging.EMBEDDED_TRANSPORT_URL)
    # kombu's in-memory transport has no heartbeats to send
    conf.set_override('heartbeat_timeout_threshold', 0,
                      'oslo_messaging_rabbit')
    return conf


@pytest.fixture
def db(conf):
    """The scheduler database at the newest schema revision."""
    database = db_api.Database(conf)
    migration.db_sync(database)
    yield database
    database.dispose()


@pytest.fixture
def managers(conf, db):
    """Build ``SchedulerManager``s (or a subclass) as a worker builds
    them, after the test's overrides; each is stopped after the test, so
    no thread of one (the claim sweeper, the report writer, the poller)
    outlives the test and its database."""
    built = []

    def build(cls=manager_mod.SchedulerManager):
        built.append(cls(conf, composition.build(conf, db)))
        return built[-1]
    yield build
    for manager in built:
        manager.stop()


@pytest.fixture
def manager(managers):
    """A ``SchedulerManager`` of the default config (``managers``)."""
    return managers()


@pytest.fixture
def other_db(conf, db):
    """A second connection pool on the same file: another worker's view."""
    database = db_api.Database(conf)
    yield database
    database.dispose()


@pytest.fixture
def transport(conf):
    """The in-process transport of ``conf``, cleaned up after the test."""
    transport = messaging.get_transport(conf)
    yield transport
    transport.cleanup()
