"""A benchmark deployment: a populated fresh database plus its servers.

    with Deployment(options, hosts=10000, used=0.7) as dep:
        manager = dep.manager()                 # in-process, no RPC
        with dep.server(workers=2) as server:   # real scheduler-server
            results = conductors.run(conductors.Load(dep.client(server),
                                                     requests))

Leaving the block stops every server it started and drops the database,
also on errors and Ctrl-C.
"""

import contextlib
import os
import time

from scheduler.service import composition
from scheduler_bench import cluster
from scheduler_bench import servers
from scheduler_bench import settings
from scheduler_bench.progress import Progress
from scheduler.db import api as db_api
from scheduler.db import migration


class Deployment:

    def __init__(self, options, hosts, used=0.0, jitter=0.0, extra=None,
                 label='cluster'):
        self.options = options
        self.hosts = hosts
        self.label = label
        self._stack = contextlib.ExitStack()
        try:
            database = cluster.BenchDatabase(options.db, options.db_url)
            self._stack.callback(database.drop)
            self.values = settings.merged(settings.base_values(database.url),
                                          extra)
            self.conf = settings.make_conf(self.values)
            self.db = db_api.Database(self.conf)
            self._stack.callback(self.db.dispose)
            migration.db_sync(self.db)
            started = time.perf_counter()
            with Progress('%s: populate %d hosts (%s)' % (
                    label, hosts, options.db), total=hosts,
                    enabled=options.progress) as bar:
                self.population = cluster.populate(
                    self.db, hosts, used=used, jitter=jitter,
                    seed=options.seed, progress=bar)
            self.populate_seconds = time.perf_counter() - started
        except BaseException:
            self._stack.close()
            raise

    def manager(self, extra=None):
        """An in-process SchedulerManager on this database."""
        conf = (settings.make_conf(settings.merged(self.values, extra))
                if extra else self.conf)
        manager = composition.build_manager(conf, self.db)
        # its poller thread stops before the database is dropped
        self._stack.callback(manager.stop)
        return manager

    @contextlib.contextmanager
    def server(self, workers, extra=None, timeout=300):
        """A started scheduler-server with ``workers`` on a new topic."""
        values = settings.merged(self.values, extra)
        topic = settings.unique_topic()
        values = settings.merged(values, {
            'DEFAULT': {'workers': workers, 'control_exchange': topic},
            'scheduler': {'topic': topic}})
        workdir = os.path.join(self.options.workdir, '%s-%dh-%dw-%s' % (
            self.label, self.hosts, workers, topic))
        server = servers.SchedulerServer(values, workdir)
        try:
            server.start(timeout=timeout)
            yield server
        finally:
            server.stop()

    @staticmethod
    def client(server):
        """Client config values for ``server``."""
        return settings.client_values(server.values)

    def audit(self):
        return cluster.audit(self.db)

    def close(self):
        self._stack.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
