"""The ``scheduler-server`` process model: workers, reload, shutdown.

Before it forks, ``scheduler-server`` runs the checks of
``scheduler.service.startup_checks`` (configuration, database, broker).
``Launcher`` then runs ``[DEFAULT] workers`` worker processes (and
``[DEFAULT] report_workers`` that serve only tracker reports, if set)
under ``scheduler.service.supervisor.Supervisor``:

* a worker that dies is restarted, later and later while it keeps dying
  young, whatever the cause (the back-off is the parent's);
* SIGTERM: every worker stops taking messages at once (the broker gives
  what it had not handed over yet to other workers), lets in-flight
  requests finish (up to ``graceful_shutdown_timeout`` seconds), marks
  its service record down and exits;
* SIGHUP: the new configuration is checked as at start-up before any
  worker is touched (``scheduler.service.reload``); if it is usable, the
  workers are replaced one at a time, each new one serving before the
  next is stopped; if not, one line says why and nothing changes;
* a worker whose parent dies exits by itself;
* SIGUSR2 (parent or worker) prints a Guru Meditation Report to stderr,
  with this release and the scheduler's own options.

Nothing that opens a socket or a thread is left in the parent before it
forks: every worker builds its own DB pool, transport and RPC server.
"""

import functools
import os
import threading

from oslo_log import log as logging
from oslo_reports import guru_meditation_report as gmr
from oslo_reports.generators import conf as gmr_conf

from scheduler import conf as sched_conf
from scheduler.db import claims
from scheduler.rpc import log_filters
from scheduler.rpc import messaging
from scheduler.nova import endpoint as nova_endpoint  # issue 21
from scheduler.service import composition
from scheduler.service import heartbeat
from scheduler.service import reload
from scheduler.service import supervisor
from scheduler import version

LOG = logging.getLogger(__name__)


class Worker(supervisor.Service):
    """One worker process: an RPC server around a SchedulerManager.

    Runs under ``supervisor.Supervisor``: ``run`` starts serving, then
    says so in its ``Readiness`` slot, and returns; ``terminate``
    (SIGTERM) stops taking messages, marks its service record down and
    lets in-flight requests finish. A reload
    replaces the process (``scheduler.service.supervisor``). A worker
    exits when its parent dies.
    """

    name = 'scheduler-worker'
    #: the topics it serves (``scheduler.rpc.messaging.SERVES_*``)
    serves = messaging.SERVES_ALL

    def __init__(self, worker_id, conf, readiness=None, serves=None):
        super().__init__(worker_id)
        self.conf = conf
        self.readiness = readiness
        self.serves = serves or self.serves
        self.index = worker_id
        self.endpoint = self.transport = self.server = None
        self.heartbeat = None
        enable_reports(conf)

    def run(self):
        log_filters.expected_database_faults()
        self.endpoint = composition.build_manager(self.conf)
        if self.serves != messaging.SERVES_REPORTS:
            self.endpoint.host_cache.refresh(force=True)
        self.transport = messaging.server_transport(self.conf)
        release_claims = functools.partial(claims.release_written,
                                           self.endpoint.db)
        self.server = messaging.get_server(
            self.conf, self.transport, [self.endpoint], serves=self.serves,
            release_claims=release_claims,
            report_writer=self.endpoint.report_writer,
            recorder=self.endpoint.recorder)
        if self.serves != messaging.SERVES_REPORTS:
            # issue 21: Nova's scheduler RPC API too, with [nova] enabled
            # (none otherwise); started, stopped and waited with the rest
            nova_servers = nova_endpoint.servers(
                self.conf, self.transport, self.endpoint, release_claims)
            if nova_servers:
                self.server.servers += nova_servers
        self.server.start()
        self.heartbeat = heartbeat.start(self.conf, self.endpoint,
                                         self.index)
        if self.serves == messaging.SERVES_REPORTS:
            LOG.info('Report worker %d (pid %d) serving topic %s',
                     self.index, os.getpid(),
                     sched_conf.scheduler.report_topic(self.conf))
        else:
            LOG.info('Worker %d (pid %d) serving topic %s with %d hosts',
                     self.index, os.getpid(), self.conf.scheduler.topic,
                     self.endpoint.host_cache.table.size)
        # after the line: a reload replaces the next worker once this one
        # says it serves, and its log then shows that order
        if self.readiness is not None:
            self.readiness.serving(self.index)

    def terminate(self):
        LOG.info('Worker %d stopping; finishing in-flight requests',
                 self.index)
        if self.server is not None:
            # stop() itself can block while the broker is unreachable
            _bounded(self.server.stop, 5)
        if self.heartbeat is not None:
            _bounded(self.heartbeat.stop, 5)
        if self.server is not None:
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

    def __init__(self, worker_id, conf, readiness=None):
        super().__init__(worker_id, conf, readiness)
        self.index = conf.workers + worker_id


def _bounded(fn, timeout):
    """Run ``fn`` in a daemon thread; True if it finished in time."""
    thread = threading.Thread(target=fn, daemon=True)
    thread.start()
    thread.join(timeout)
    return not thread.is_alive()


class Launcher:
    """Forks and supervises the workers (parent process): the
    ``Supervisor`` with its workers, reload and readiness (module
    docstrings of ``supervisor`` and ``reload``)."""

    def __init__(self, conf):
        self.conf = conf

    def run(self):
        conf = self.conf
        enable_reports(conf)
        decisions, reporters = conf.workers, conf.report_workers
        readiness = supervisor.Readiness(decisions + reporters)
        manager = supervisor.Supervisor(
            lambda: reload.prepare(conf), readiness,
            ready_timeout=conf.graceful_shutdown_timeout + 60,
            graceful_shutdown_timeout=conf.graceful_shutdown_timeout + 5)
        manager.add_workers(Worker, decisions, (
            conf, readiness,
            messaging.SERVES_DECISIONS if reporters else None), 0)
        if reporters:
            manager.add_workers(ReportWorker, reporters, (conf, readiness),
                                decisions)
        LOG.info('scheduler-server %s starting %d workers%s',
                 version.release(), decisions,
                 ' and %d report workers' % reporters if reporters else '')
        manager.run()
        return 0


def enable_reports(conf):
    """SIGUSR2 prints a Guru Meditation Report (threads, the scheduler's
    configuration, package) to stderr, in the parent and every worker."""
    _Report.conf = conf
    _Report.setup_autorun(_Version())


class _Report(gmr.TextGuruMeditation):
    """oslo.reports' report, with our options instead of its global ones
    (secret options masked, as oslo.reports does)."""

    conf = None

    def add_section(self, heading, generator, index=None):
        if isinstance(generator, gmr_conf.ConfigReportGenerator):
            generator = gmr_conf.ConfigReportGenerator(self.conf)
        super().add_section(heading, generator, index)


class _Version:
    """What the Guru Meditation Report prints as the package."""

    @staticmethod
    def vendor_string():
        return 'OpenStack'

    @staticmethod
    def product_string():
        return 'scheduler-server'

    @staticmethod
    def version_string_with_package():
        return version.release()
