"""Real ``scheduler-server`` processes for the multi-worker scenarios.

``SchedulerServer(values, workdir)`` writes the configuration to
``workdir/server.conf`` and runs ``python -m scheduler.cmd.server`` on it,
logging to ``workdir/server.log``. ``start()`` returns once every worker
consumes the topic queue (asked of RabbitMQ, so it holds whatever the
workers log); ``stop()`` sends SIGTERM and waits. The workers' own
Prometheus endpoints (``[prometheus] port``, on free ports picked here)
tell how many claim conflicts they met (``claim_conflicts()``, read
before ``stop()``); ``/proc`` tells their memory.
"""

import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import kombu
from prometheus_client import parser as prometheus_parser

from scheduler_bench import settings

CONFLICTS_METRIC = 'scheduler_claim_conflicts'


class ServerError(RuntimeError):
    pass


class SchedulerServer:

    def __init__(self, values, workdir):
        self.values = values
        self.workers = int(values['DEFAULT']['workers'])
        self.report_workers = int(values['DEFAULT'].get('report_workers',
                                                        0))
        self.topic = values['scheduler']['topic']
        self.report_topic = (values['scheduler'].get('report_topic')
                             or self.topic + '_reports')
        os.makedirs(workdir, exist_ok=True)
        self.log_path = os.path.join(workdir, 'server.log')
        self.metrics_port = free_ports(self.workers + self.report_workers)
        values = settings.merged(values, {
            'DEFAULT': {'log_file': self.log_path},
            'prometheus': {'port': self.metrics_port}})
        self.config_path = settings.write_config(
            os.path.join(workdir, 'server.conf'), values)
        self.process = None
        self.started_in = None

    def start(self, timeout=180):
        """Start and wait until every worker serves; seconds it took."""
        started = time.monotonic()
        self._stderr = open(self.log_path + '.stderr', 'w')
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'scheduler.cmd.server',
             '--config-file', self.config_path],
            stdout=subprocess.DEVNULL, stderr=self._stderr)
        deadline = started + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError('scheduler-server exited with %s:\n%s' % (
                    self.process.returncode, self.log_tail()))
            if self.log_count(' ERROR ') or self.log_count(' CRITICAL '):
                self.stop()
                raise ServerError('scheduler-server failed to start:\n%s'
                                  % self.log_tail())
            if (self.consumers() >= self.workers and (
                    not self.report_workers or self.consumers(
                        self.report_topic) >= self.report_workers)):
                self.started_in = time.monotonic() - started
                return self.started_in
            time.sleep(0.2)
        self.stop()
        raise ServerError('scheduler-server: %d workers not serving after '
                          '%ds:\n%s' % (self.workers, timeout,
                                        self.log_tail()))

    def consumers(self, queue=None):
        """How many consumers the topic queue (or ``queue``) has (0 if
        none yet)."""
        with kombu.Connection(settings.BROKER_URL,
                              connect_timeout=5) as connection:
            channel = connection.channel()
            try:
                _, _, count = channel.queue_declare(
                    queue=queue or self.topic, passive=True)
                return count
            except Exception:  # the queue does not exist yet
                return 0

    def stop(self, timeout=30):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            for pid in self.worker_pids():
                _kill(pid)
            self.process.kill()
            self.process.wait()
        self._stderr.close()
        forget_topic(self.topic)

    def worker_pids(self):
        if self.process is None:
            return []
        return children(self.process.pid)

    def worker_rss_mb(self):
        """Resident memory of each worker, in MiB."""
        return [rss_mb(pid) for pid in self.worker_pids()]

    def log_count(self, needle):
        try:
            with open(self.log_path, errors='replace') as f:
                return sum(1 for line in f if needle in line)
        except FileNotFoundError:
            return 0

    def claim_conflicts(self):
        """Claim conflicts the decision workers counted, from their
        metrics endpoints (worker N on ``metrics_port + N``)."""
        total = 0
        for worker in range(self.workers):
            url = 'http://127.0.0.1:%d/metrics' % (self.metrics_port + worker)
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    text = response.read().decode()
            except OSError as exc:
                raise ServerError('no metrics from worker %d (%s): %s' % (
                    worker, url, exc))
            total += sum(
                sample.value
                for family in prometheus_parser.text_string_to_metric_families(
                    text) if family.name == CONFLICTS_METRIC
                for sample in family.samples
                if sample.name == CONFLICTS_METRIC + '_total')
        return int(total)

    def log_tail(self, lines=20):
        text = []
        for path in (self.log_path, self.log_path + '.stderr'):
            try:
                with open(path, errors='replace') as f:
                    text.extend(f.read().splitlines()[-lines:])
            except FileNotFoundError:
                pass
        return '\n'.join(text)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


#: where free ports are drawn from: from here to the kernel's ephemeral
#: range (``ephemeral_start``)
PORTS_FROM = 20000


def ephemeral_start():
    """The first port of the kernel's ephemeral range (32768 if unknown):
    the local ports of outgoing connections come from there."""
    try:
        with open('/proc/sys/net/ipv4/ip_local_port_range') as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(count=1, attempts=200):
    """The first of ``count`` consecutive TCP ports free on 127.0.0.1,
    below the ephemeral range: a port there can only be taken by a
    server that binds it, where one in the range may become the local
    port of any process's outgoing connection (to the broker, to the
    database) between this check and the server's bind; under parallel
    tests that happened to a worker's metrics port."""
    high = ephemeral_start() - count
    low = min(PORTS_FROM, high // 2)
    for _ in range(attempts):
        first = random.randrange(low, high)
        sockets = []
        try:
            for port in range(first, first + count):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(('127.0.0.1', port))
            return first
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise ServerError('no %d consecutive free ports' % count)


def forget_topic(topic):
    """Delete the exchanges of a bench topic (best effort).

    The bench's queues are auto-deleted or expire (``settings``); an
    auto-delete exchange that never had a binding stays, so remove them.
    """
    try:
        with kombu.Connection(settings.BROKER_URL,
                              connect_timeout=5) as connection:
            for name in (topic, '%s_fanout' % topic):
                connection.channel().exchange_delete(name)
    except Exception:  # nothing to delete, or the broker is gone
        pass


def _kill(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def children(pid):
    """Pids of the direct children of ``pid`` (Linux /proc)."""
    out = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % entry) as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may hold spaces: the fields follow its ')'
        fields = stat[stat.rindex(')') + 2:].split()
        if int(fields[1]) == pid:
            out.append(int(entry))
    return sorted(out)


def rss_mb(pid=None):
    """VmRSS of ``pid`` (default: this process) in MiB; 0 if gone."""
    path = '/proc/%s/status' % (pid or 'self')
    try:
        with open(path) as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0
