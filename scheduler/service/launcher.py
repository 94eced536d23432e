"""The ``scheduler-server`` process model: checks, workers, shutdown.

Before it forks, the parent process validates every configuration value
and the transport URL (``check_config``), then checks that the database
(schema at the newest migration) and the message broker can be reached,
retrying ``[DEFAULT] startup_retries`` times. Each failure is one
``SchedulerException`` the command turns into one line on stderr and exit
status 2.

``Launcher`` then runs ``[DEFAULT] workers`` worker processes (and
``[DEFAULT] report_workers`` that serve only tracker reports, if set)
under cotyledon, the process manager of oslo.service's threading backend:

* a worker that dies is restarted, with a doubling delay while it keeps
  dying soon after its start (a worker that cannot start does not spin);
* SIGTERM: every worker stops taking messages, lets in-flight requests
  finish (up to ``graceful_shutdown_timeout`` seconds) and exits;
* SIGHUP: the configuration files are read again and every worker
  restarts gracefully with them; the parent and its workers stay one
  process group, nothing is orphaned;
* a worker whose parent dies exits by itself;
* SIGUSR2 (parent or worker) prints a Guru Meditation Report to stderr.

Nothing that opens a socket or a thread is left in the parent before it
forks: every worker builds its own DB pool, transport and RPC server.
"""

import importlib.metadata
import os
import threading
import time
from urllib.parse import quote
from urllib.parse import urlsplit

import cotyledon
import kombu
import oslo_messaging
from oslo_config import cfg
from oslo_log import log as logging
from oslo_reports import guru_meditation_report as gmr

from scheduler.service import broker_tls
from scheduler import conf as sched_conf
from scheduler import exception
from scheduler.rpc import log_filters
from scheduler.service import composition
from scheduler.service import masking
from scheduler.rpc import messaging
from scheduler.service import heartbeat
from scheduler.db import api as db_api
from scheduler.db import migration

LOG = logging.getLogger(__name__)

# a worker dying sooner than this after its start is restarted with back-off
_HEALTHY_AFTER = 30.0
_MAX_BACKOFF = 60


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


def check_config(conf):
    """Read every option once (oslo.config converts values lazily, so a
    bad value would otherwise surface in a worker) and check the transport
    URL names an installed driver."""
    for name in list(conf):
        value = _read(conf, None, name)
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for opt_name in list(value):
                _read(value, name, opt_name)
    try:
        url = oslo_messaging.TransportURL.parse(conf, conf.transport_url)
    except oslo_messaging.InvalidTransportURL as exc:
        raise exception.ConfigInvalid(reason='invalid transport_url: %s' %
                                      exc)
    drivers = {e.name for e in importlib.metadata.entry_points(
        group='oslo.messaging.drivers')}
    if url.transport and url.transport not in drivers:
        raise exception.ConfigInvalid(
            reason='transport_url %s: unknown transport %r (installed: %s)'
            % (redact(conf.transport_url), url.transport,
               ', '.join(sorted(drivers))))


def _read(group, group_name, name):
    try:
        return group[name]
    except (cfg.Error, ValueError) as exc:
        # "Value for option X from LocationInfo(...) is not valid: why"
        why = str(exc).splitlines()[0].rsplit(' is not valid: ', 1)[-1]
        raise exception.ConfigInvalid(
            reason='invalid value for [%s] %s: %s' %
            (group_name or 'DEFAULT', name, why))


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


class Worker(cotyledon.Service):
    """One worker process: an RPC server around a SchedulerManager.

    Runs under cotyledon (the process manager of oslo.service's threading
    backend): ``run`` starts serving and returns, ``terminate`` (SIGTERM)
    stops taking messages and lets in-flight requests finish, ``reload``
    (SIGHUP) is a graceful restart that picks up the parent's reloaded
    configuration. A worker exits when its parent dies.
    """

    name = 'scheduler-worker'
    #: the topics it serves (``scheduler.rpc.messaging.SERVES_*``)
    serves = messaging.SERVES_ALL

    def __init__(self, worker_id, conf, serves=None):
        super().__init__(worker_id)
        self.conf = conf
        self.serves = serves or self.serves
        self.index = worker_id
        self.endpoint = self.transport = self.server = None
        enable_reports()

    def run(self):
        log_filters.expected_database_faults()
        self.endpoint = composition.build_manager(self.conf)
        if self.serves != messaging.SERVES_REPORTS:
            self.endpoint.host_cache.refresh(force=True)
        self.transport = messaging.get_transport(self.conf)
        self.server = messaging.get_server(self.conf, self.transport,
                                     [self.endpoint], serves=self.serves)
        self.server.start()
        heartbeat.start(self.conf, self.endpoint, self.index)
        if self.serves == messaging.SERVES_REPORTS:
            LOG.info('Report worker %d (pid %d) serving topic %s',
                     self.index, os.getpid(),
                     sched_conf.scheduler.report_topic(self.conf))
        else:
            LOG.info('Worker %d (pid %d) serving topic %s with %d hosts',
                     self.index, os.getpid(), self.conf.scheduler.topic,
                     self.endpoint.host_cache.table.size)

    def terminate(self):
        LOG.info('Worker %d stopping; finishing in-flight requests',
                 self.index)
        if self.server is not None:
            # stop() itself can block while the broker is unreachable
            _bounded(self.server.stop, 5)
            if not _bounded(self.server.wait,
                            self.conf.graceful_shutdown_timeout or None):
                LOG.warning('Worker %d: requests still running after %ds; '
                            'exiting anyway', self.index,
                            self.conf.graceful_shutdown_timeout)
        if self.endpoint is not None:
            self.endpoint.stop()
            self.endpoint.db.dispose()
        if self.transport is not None:
            _bounded(self.transport.cleanup, 5)
        LOG.info('Worker %d stopped', self.index)


class ReportWorker(Worker):
    """A worker that serves only the report topic (``[DEFAULT]
    report_workers``): it writes tracker reports and keeps no host table.
    Its index follows the decision workers' (heartbeat, metrics port)."""

    name = 'scheduler-report-worker'
    serves = messaging.SERVES_REPORTS

    def __init__(self, worker_id, conf):
        super().__init__(worker_id, conf)
        self.index = conf.workers + worker_id


def _bounded(fn, timeout):
    """Run ``fn`` in a daemon thread; True if it finished in time."""
    thread = threading.Thread(target=fn, daemon=True)
    thread.start()
    thread.join(timeout)
    return not thread.is_alive()


class Launcher:
    """Forks and supervises the workers (parent process), with cotyledon.

    A worker that dies is restarted; one that keeps dying within
    ``_HEALTHY_AFTER`` seconds of its start is restarted after a delay
    that doubles each time, up to ``_MAX_BACKOFF``. SIGHUP reloads the
    configuration files (keeping the old values if they do not parse) and
    restarts the workers gracefully, one signal for the whole group; SIGTERM
    stops them gracefully; SIGUSR2 prints a Guru Meditation Report.
    """

    def __init__(self, conf, sleep=time.sleep):
        self.conf = conf
        self.started = {}
        self.failures = 0
        self._sleep = sleep     # the back-off's wait (tests record it)

    def run(self):
        enable_reports()
        manager_ = cotyledon.ServiceManager(
            graceful_shutdown_timeout=self.conf.graceful_shutdown_timeout + 5)
        reporters = self.conf.report_workers
        manager_.add(Worker, workers=self.conf.workers, args=(
            self.conf, messaging.SERVES_DECISIONS if reporters else None))
        if reporters:
            manager_.add(ReportWorker, workers=reporters, args=(self.conf,))
        manager_.register_hooks(on_reload=self._on_reload,
                                on_new_worker=self._on_new_worker,
                                on_dead_worker=self._on_dead_worker)
        LOG.info('scheduler-server starting %d workers%s', self.conf.workers,
                 ' and %d report workers' % reporters if reporters else '')
        manager_.run()
        return 0

    def _on_reload(self):
        LOG.info('SIGHUP: reloading configuration and restarting workers')
        problem = validate_files(self.conf)
        if problem:
            LOG.error('Not reloading: %s; workers restart with the '
                      'previous configuration', problem)
        elif not self.conf.reload_config_files():
            LOG.error('Configuration files do not parse; keeping the '
                      'previous configuration')

    def _on_new_worker(self, service_id, worker_id, service):
        self.started[service_id, worker_id] = time.monotonic()

    def _on_dead_worker(self, service_id, worker_id, exit_code):
        lived = time.monotonic() - self.started.get((service_id, worker_id),
                                                    0)
        if exit_code == 0:   # a graceful stop (SIGHUP): restart at once
            LOG.info('Worker %d exited; restarting it', worker_id)
            return
        if lived >= _HEALTHY_AFTER:
            self.failures = 0
            LOG.error('Worker %d died (exit code %s); restarting it',
                      worker_id, exit_code)
            return
        self.failures += 1
        delay = min(_MAX_BACKOFF, 2 ** (self.failures - 1))
        LOG.error('Worker %d died %.1fs after starting (exit code %s); '
                  'restarting it in %ds', worker_id, lived, exit_code, delay)
        # cotyledon respawns once this hook returns
        self._sleep(delay)


def validate_files(conf):
    """Why the config files of ``conf``, read afresh, are not usable
    (one line), or None: a SIGHUP must not swap in a bad value."""
    fresh = sched_conf.new_config()
    logging.register_options(fresh)
    argv = []
    for path in conf.config_file or ():
        argv += ['--config-file', path]
    for path in conf.config_dir or ():
        argv += ['--config-dir', path]
    try:
        fresh(argv, project='scheduler', default_config_files=[],
              default_config_dirs=[])
        check_config(fresh)
    except (cfg.Error, exception.SchedulerException) as exc:
        return str(exc).splitlines()[0]
    return None


def enable_reports():
    """SIGUSR2 prints a Guru Meditation Report (threads, config, package)
    to stderr, in the parent and in every worker."""
    gmr.TextGuruMeditation.setup_autorun(_Version())


class _Version:
    """What the Guru Meditation Report prints as the package."""

    @staticmethod
    def vendor_string():
        return 'scheduler'

    @staticmethod
    def product_string():
        return 'scheduler-server'

    @staticmethod
    def version_string_with_package():
        try:
            return importlib.metadata.version('scheduler')
        except importlib.metadata.PackageNotFoundError:
            return 'unknown'
