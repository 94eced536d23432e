"""``scheduler-server`` as a subprocess, with its config file and logs.

``SchedulerServer(workdir, db_url, workers, options)`` writes
``scheduler.conf`` (RabbitMQ on 127.0.0.1 in the test process's vhost,
``shared_broker``, a topic of its own so tests never see each other's
messages, the given database), runs ``db sync``,
then ``start()`` / ``wait_ready()`` / ``stop()`` the daemon. Each start
logs to a new ``server-N.log`` (oslo.log) and ``server-N.out`` (stdout and
stderr) in ``workdir``; ``tail()`` shows them when something goes wrong.

``client()`` is a SchedulerClient built from the same config file, as a
conductor would build it; ``raw_client()`` is a bare oslo.messaging RPC
client on the same topic, for sending what SchedulerClient would refuse.
"""

import os
import pathlib
import re
import signal
import subprocess
import sys
import threading
import uuid

import kombu
import oslo_messaging
import pytest
import sqlalchemy as sa
from oslo_config import cfg
from sqlalchemy import pool

from scheduler.rpc import messaging
from scheduler.client import SchedulerClient
from tests import waiting
from tests.functional import shared_broker

# subprocesses run from the repository, so they import the same code
ROOT = pathlib.Path(__file__).resolve().parents[2]
RPC_SERVER_NAME = 'sched-func-host'
READY_TIMEOUT = 60
STOP_TIMEOUT = 20
READY_LINE = 'serving topic'
# a worker's line once it serves: its index and pid
SERVING_LINE = re.compile(r'Worker (\d+) \(pid (\d+)\) serving topic')


def _ini(sections):
    lines = []
    for section, options in sections.items():
        lines.append('[%s]' % section)
        for key, value in options.items():
            if isinstance(value, bool):
                value = 'true' if value else 'false'
            elif isinstance(value, (list, tuple)):
                value = ','.join(value)
            lines.append('%s = %s' % (key, value))
        lines.append('')
    return '\n'.join(lines)


def _tail(path, lines):
    try:
        text = path.read_text(errors='replace')
    except FileNotFoundError:
        return '(%s does not exist)' % path.name
    return '\n'.join(text.splitlines()[-lines:]) or '(empty)'


class SchedulerServer:
    """One scheduler deployment: config, database and daemon process."""

    def __init__(self, workdir, db_url, workers=2, options=None):
        self.workdir = pathlib.Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.db_url = db_url
        self.workers = workers
        self.topic = self.new_topic()
        self.config_path = self.workdir / 'scheduler.conf'
        self.process = None
        self.starts = 0
        self._clients = []
        self._engine = None
        sections = {
            'DEFAULT': {
                'transport_url': shared_broker.transport_url(),
                'host': RPC_SERVER_NAME,
                'workers': workers,
                'rpc_response_timeout': 30,
                'graceful_shutdown_timeout': 10,
                'startup_retries': 2,
                'startup_retry_interval': 1,
            },
            'scheduler': {
                'topic': self.topic,
                # tests run longer than a report's default lifetime
                'service_down_time': 3600,
            },
            'database': {'connection': db_url},
            # reply queues outlive their client; let RabbitMQ drop them soon
            'oslo_messaging_rabbit': {'rabbit_transient_queues_ttl': 60},
        }
        for section, values in (options or {}).items():
            sections.setdefault(section, {}).update(values)
        # servers given one topic serve it together
        self.topic = sections['scheduler']['topic']
        # where trackers' reports queue ([scheduler] report_topic)
        self.report_topic = (sections['scheduler'].get('report_topic')
                             or '%s_reports' % self.topic)
        # every process that logs a 'serving topic' line once up
        self.serving = workers + int(
            sections['DEFAULT'].get('report_workers', 0))
        self.config_path.write_text(_ini(sections))

    @staticmethod
    def new_topic():
        return 'sched-func-%s' % uuid.uuid4().hex

    # -- the daemon -----------------------------------------------------

    @property
    def log_path(self):
        return self.workdir / ('server-%d.log' % self.starts)

    @property
    def out_path(self):
        return self.workdir / ('server-%d.out' % self.starts)

    #: the python that runs the release under test, and where from
    python = sys.executable
    #: what the server's command runs under, e.g. ``ip netns exec NS``
    #: (``net_host.NetHost.prefix``)
    prefix = ()
    release = 'scheduler-manage'

    @property
    def cwd(self):
        return ROOT

    def db_sync(self):
        result = subprocess.run(
            [str(self.python), '-m', 'scheduler.cmd.manage', '--config-file',
             str(self.config_path), 'db', 'sync'],
            cwd=self.cwd, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            pytest.fail('%s db sync failed (%d):\n%s%s' % (
                self.release, result.returncode, result.stdout,
                result.stderr))

    def start(self):
        assert self.process is None, 'server already running'
        self.starts += 1
        with open(self.out_path, 'wb') as out:
            self.process = subprocess.Popen(
                [*self.prefix, str(self.python), '-m', 'scheduler.cmd.server',
                 '--config-file', str(self.config_path),
                 '--log-file', str(self.log_path)],
                cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT)
        return self

    def log_text(self):
        try:
            return self.log_path.read_text(errors='replace')
        except FileNotFoundError:
            return ''

    def count_in_log(self, text):
        return self.log_text().count(text)

    def lines_with(self, text):
        """The log lines that contain ``text``."""
        return [line for line in self.log_text().splitlines()
                if text in line]

    def errors_in_log(self, ignore=(), limit=5):
        """The first ``limit`` ERROR (or CRITICAL) lines of the log,
        leaving out those that contain one of the ``ignore`` strings."""
        lines = [line for line in self.log_text().splitlines()
                 if (' ERROR ' in line or ' CRITICAL ' in line)
                 and not any(text in line for text in ignore)]
        return lines[:limit]

    def wait_ready(self, timeout=READY_TIMEOUT):
        """Wait for a 'serving topic' line from every worker."""
        def ready():
            if self.process.poll() is not None:
                pytest.fail('scheduler-server exited with %d before it was '
                            'ready (%d/%d workers serving)\n%s' % (
                                self.process.returncode,
                                self.count_in_log(READY_LINE),
                                self.serving, self.tail()), pytrace=False)
            return self.count_in_log(READY_LINE) >= self.serving
        try:
            waiting.wait_for(ready, timeout, 'every worker serving',
                             interval=0.1)
        except AssertionError as exc:
            pytest.fail('scheduler-server not ready: %s (%d/%d workers '
                        'serving)\n%s' % (exc, self.count_in_log(READY_LINE),
                                           self.serving, self.tail()),
                        pytrace=False)
        return self

    def stop(self):
        """SIGTERM; fail unless the server exits 0 within STOP_TIMEOUT."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            _kill_tree(process.pid)
            process.wait(timeout=10)
            pytest.fail('scheduler-server did not stop within %ds of '
                        'SIGTERM; killed it\n%s' % (STOP_TIMEOUT,
                                                    self.tail()),
                        pytrace=False)
        if code != 0:
            pytest.fail('scheduler-server exited with %d after SIGTERM\n%s'
                        % (code, self.tail()), pytrace=False)

    def restart(self):
        self.stop()
        return self.start().wait_ready()

    def started_worker_pids(self):
        """The pid of every worker that has served, in the order they
        started (the log's ``serving topic`` lines; dead ones too)."""
        return [int(m.group(2))
                for m in SERVING_LINE.finditer(self.log_text())]

    def worker_pids(self):
        """The pids of the worker processes running now, sorted."""
        return _children(self.process.pid)

    def assert_alive(self):
        if self.process is None or self.process.poll() is not None:
            pytest.fail('scheduler-server is not running\n%s' % self.tail(),
                        pytrace=False)

    def tail(self, lines=40):
        parts = []
        for start in range(1, self.starts + 1):
            for suffix in ('log', 'out'):
                path = self.workdir / ('server-%d.%s' % (start, suffix))
                parts.append('--- last %d lines of %s ---\n%s' % (
                    lines, path, _tail(path, lines)))
        return '\n'.join(parts)

    # -- talking to it --------------------------------------------------

    def conf(self):
        """A private ConfigOpts read from the server's config file."""
        conf = cfg.ConfigOpts()
        conf(['--config-file', str(self.config_path)], project='scheduler',
             default_config_files=[])
        return conf

    def client(self):
        client = SchedulerClient(self.conf())
        self._clients.append(client)
        return client

    def raw_client(self, client):
        """A bare RPC client on the topic, with the scheduler serializer,
        sharing the transport of SchedulerClient ``client``."""
        target = oslo_messaging.Target(topic=self.topic, version='1.0')
        return oslo_messaging.get_rpc_client(
            client.transport, target, serializer=messaging.get_serializer())

    @property
    def engine(self):
        """SQLAlchemy engine on the scheduler database (no pooling)."""
        if self._engine is None:
            self._engine = sa.create_engine(self.db_url,
                                            poolclass=pool.NullPool)
        return self._engine

    # -- teardown -------------------------------------------------------

    def close(self):
        """Stop everything; fails (after cleaning up) if the stop failed.
        The clients close while the server stops: each takes about a
        second (its reply listener's poll), which the tests would
        otherwise wait out one after the other."""
        closing = [threading.Thread(target=client.close, daemon=True)
                   for client in self._clients]
        self._clients = []
        for thread in closing:
            thread.start()
        try:
            self.stop()
        finally:
            for thread in closing:
                thread.join(30)
            if self._engine is not None:
                self._engine.dispose()
            _delete_queues([self.topic, self.report_topic,
                            '%s.%s' % (self.topic, RPC_SERVER_NAME)])


def _children(pid):
    """The pids of ``pid``'s child processes, sorted."""
    try:
        out = subprocess.run(['pgrep', '-P', str(pid)],
                             capture_output=True, text=True).stdout
    except OSError:
        out = ''
    return sorted(int(child) for child in out.split())


def _kill_tree(pid):
    for child in _children(pid):
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _delete_queues(names):
    """Best effort: the topic queues are not auto-deleted by RabbitMQ."""
    try:
        with kombu.Connection(shared_broker.amqp_url(),
                              connect_timeout=5) as connection:
            channel = connection.channel()
            for name in names:
                channel.queue_delete(name)
    except Exception:  # leftover queues are harmless, only untidy
        pass
