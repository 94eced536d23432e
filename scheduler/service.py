"""The ``scheduler-server`` process model: checks, workers, shutdown.

The parent process checks once that the database (schema at the newest
migration) and the message broker can be reached, retrying
``[DEFAULT] startup_retries`` times, then forks ``[DEFAULT] workers``
worker processes and supervises them: a worker that dies is restarted;
SIGTERM or SIGINT is passed to every worker, which stops taking messages,
lets in-flight requests finish (up to ``graceful_shutdown_timeout``
seconds) and exits.

Nothing that opens a socket or a thread is left in the parent before it
forks: every worker builds its own DB pool, transport and RPC server.
"""

import logging as std_logging
import os
import signal
import threading
import time
from urllib.parse import quote
from urllib.parse import urlsplit

import kombu
import oslo_messaging
from oslo_log import log as logging

from scheduler import broker_tls
from scheduler import exception
from scheduler import manager
from scheduler import masking
from scheduler import rpc
from scheduler import worker_reporting
from scheduler.db import api as db_api
from scheduler.db import migration

LOG = logging.getLogger(__name__)

_RESPAWN_DELAY = 1.0


def _retry(conf, what, probe):
    attempts = conf.startup_retries + 1
    for attempt in range(1, attempts + 1):
        try:
            return probe()
        except exception.InvalidRequest:
            raise
        except Exception as exc:  # any driver error means "not yet"
            if attempt == attempts:
                raise exception.ServiceUnavailable(
                    service=what[0], url=what[1],
                    reason='%s (after %d attempts)' % (redact(exc), attempts))
            LOG.warning('%s not reachable (%s), retry %d/%d in %.1fs',
                        what[0], redact(exc), attempt, attempts - 1,
                        conf.startup_retry_interval)
            time.sleep(conf.startup_retry_interval)


def check_database(conf):
    """Reach the DB and make sure its schema is current."""
    url = conf.database.connection

    def probe():
        database = db_api.Database(conf, max_retries=0)
        try:
            return migration.db_version(database)
        finally:
            database.dispose()

    version = _retry(conf, ('database', redact(url)), probe)
    head = migration.head_revision()
    # a revision this release does not know is a later release's: its
    # migrations only add, so this release runs on it (rolling upgrades)
    if version != head and (version is None
                            or migration.is_known_revision(version)):
        raise exception.InvalidRequest(
            reason='database schema is at %s, expected %s: run '
            '"scheduler-manage db sync" first' % (version, head))


def _kombu_urls(conf):
    url = oslo_messaging.TransportURL.parse(conf, conf.transport_url)
    if not url.transport or url.transport.startswith('kombu+memory'):
        return []
    if url.transport not in ('rabbit', 'amqp'):
        return []
    urls = []
    for host in url.hosts or [None]:
        if host is None:
            urls.append('amqp://guest:guest@localhost:5672/')
            continue
        urls.append('amqp://%s:%s@%s:%s/%s' % (
            quote(host.username or "guest", safe=""),
            quote(host.password or "guest", safe=""),
            host.hostname or 'localhost', host.port or 5672,
            url.virtual_host or ''))
    return urls


def check_broker(conf):
    """Reach at least one of the broker hosts of ``transport_url``, with
    the TLS settings of ``[oslo_messaging_rabbit]``."""
    urls = _kombu_urls(conf)
    if not urls:
        return

    def probe():
        errors = []
        for url in urls:
            connection = kombu.Connection(url, connect_timeout=5, ssl=(
                broker_tls.ssl_options(conf, urlsplit(url).hostname)))
            try:
                connection.connect()
                return
            except Exception as exc:
                errors.append('%s: %s' % (
                    redact(url), broker_tls.describe_error(conf, exc)))
            finally:
                connection.release()
        raise ConnectionError('; '.join(errors))

    _retry(conf, ('message broker', redact(conf.transport_url or urls[0])),
           probe)


def redact(url):
    """``url`` (or any text) with every password replaced by ``***``."""
    return masking.mask(url)


class Worker:
    """One worker process: an RPC server around a SchedulerManager."""

    def __init__(self, conf, index):
        self.conf = conf
        self.index = index
        self._stop = threading.Event()

    def run(self):
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        endpoint = manager.SchedulerManager(self.conf)
        endpoint.host_cache.refresh(force=True)
        transport = rpc.get_transport(self.conf)
        server = rpc.get_server(self.conf, transport, [endpoint])
        server.start()
        worker_reporting.start(self.conf, endpoint, self.index)
        LOG.info('Worker %d (pid %d) serving topic %s with %d hosts',
                 self.index, os.getpid(), self.conf.scheduler.topic,
                 endpoint.host_cache.table.size)
        while not self._stop.wait(1.0):
            pass
        LOG.info('Worker %d stopping; finishing in-flight requests',
                 self.index)
        server.stop()
        waiter = threading.Thread(target=server.wait, daemon=True)
        waiter.start()
        waiter.join(self.conf.graceful_shutdown_timeout or None)
        if waiter.is_alive():
            LOG.warning('Worker %d: requests still running after %ds; '
                        'exiting anyway', self.index,
                        self.conf.graceful_shutdown_timeout)
        endpoint.stop()
        transport.cleanup()
        endpoint.db.dispose()
        LOG.info('Worker %d stopped', self.index)

    def _on_signal(self, signum, frame):
        self._stop.set()


class Launcher:
    """Forks and supervises the workers (parent process)."""

    def __init__(self, conf):
        self.conf = conf
        self.children = {}
        self.stopping = False

    def _spawn(self, index):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                Worker(self.conf, index).run()
            except BaseException:
                LOG.exception('Worker %d failed', index)
                code = 1
            finally:
                std_logging.shutdown()
                os._exit(code)
        self.children[pid] = index
        return pid

    def _on_signal(self, signum, frame):
        self.stopping = True

    def run(self):
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        for index in range(self.conf.workers):
            self._spawn(index)
        LOG.info('scheduler-server started %d workers: %s',
                 self.conf.workers, sorted(self.children))
        while not self.stopping:
            self._reap(respawn=True)
            time.sleep(0.2)
        return self._shutdown()

    def _reap(self, respawn):
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            index = self.children.pop(pid, None)
            if index is None:
                continue
            if respawn and not self.stopping:
                LOG.error('Worker %d (pid %d) died with status %d; '
                          'restarting it', index, pid, status)
                time.sleep(_RESPAWN_DELAY)
                self._spawn(index)

    def _shutdown(self):
        LOG.info('Stopping %d workers', len(self.children))
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + self.conf.graceful_shutdown_timeout + 5
        while self.children and time.monotonic() < deadline:
            self._reap(respawn=False)
            time.sleep(0.1)
        for pid in list(self.children):
            LOG.warning('Worker pid %d did not stop; killing it', pid)
            os.kill(pid, signal.SIGKILL)
        self._reap(respawn=False)
        LOG.info('scheduler-server stopped')
        return 0
