"""The broker's floor: a bare oslo.messaging call on the bench's transport.

An echo endpoint runs in its own process (threading executor, like a
scheduler worker) on a unique topic; this process calls it one request at
a time. What ``select_destinations`` costs end to end above this floor is
the scheduler's own (serialization, refresh, decision, claim).
"""

import time

import oslo_messaging

from scheduler_bench import conductors
from scheduler_bench import cost_cpu
from scheduler_bench import servers
from scheduler_bench import settings
from scheduler_bench import stats

_PAYLOAD = {'flavor': {'vcpus': 2, 'memory_mb': 4096, 'root_gb': 40},
            'num_instances': 1}


class _Echo:
    target = oslo_messaging.Target(version='1.0')

    def echo(self, ctxt, payload=None):
        return payload


def _server_main(values, ready, go, start_at, results):
    settings.quiet_client_logs()
    conf = settings.make_conf(values)
    transport = oslo_messaging.get_rpc_transport(conf)
    server = oslo_messaging.get_rpc_server(
        transport, oslo_messaging.Target(topic=values['scheduler']['topic'],
                                         server='echo'),
        [_Echo()], executor='threading')
    server.start()
    ready.put(True)
    go.wait()
    server.stop()
    server.wait()
    transport.cleanup()
    results.put(True)


class EchoServer:
    """The echo server in its own process, running while this is open;
    ``call()`` and ``cast()`` send it ``payload`` one at a time
    (``warmup`` calls are sent first), ``meter`` reads the server's CPU
    (``scheduler_bench.cost_cpu``)."""

    def __init__(self, payload=None, warmup=20):
        self.values = settings.client_values(settings.base_values('sqlite://'))
        self.topic = self.values['scheduler']['topic']
        self.payload = _PAYLOAD if payload is None else payload
        self.warmup = warmup
        self._group = None
        self._transport = None
        self._ready = False

    def __enter__(self):
        settings.quiet_client_logs()
        self._group = conductors.ProcessGroup(_server_main, [(self.values,)])
        self._group.__enter__()
        try:
            self._group.wait_ready()
            self._ready = True
            pid = self._group.children[0].pid
            self.meter = cost_cpu.Meter(lambda: {pid})
            self._transport = oslo_messaging.get_rpc_transport(
                settings.make_conf(self.values))
            self._client = oslo_messaging.get_rpc_client(
                self._transport,
                oslo_messaging.Target(topic=self.topic, version='1.0'))
            for _ in range(self.warmup):
                self.call()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        try:
            if self._transport is not None:
                self._transport.cleanup()
            if self._ready:     # else close() ends a server never ready
                self._group.go()
                self._group.results(60)
        finally:
            self._group.__exit__(None, None, None)
            servers.forget_topic(self.topic)

    def call(self):
        return self._client.call({}, 'echo', payload=self.payload)

    def cast(self):
        self._client.cast({}, 'echo', payload=self.payload)


def measure(count, warmup=20):
    """Latency summary of ``count`` sequential bare calls."""
    samples = []
    with EchoServer(warmup=warmup) as echo:
        for _ in range(count):
            started = time.perf_counter()
            echo.call()
            samples.append(time.perf_counter() - started)
    return stats.summarize(samples)
