"""The broker's floor: a bare oslo.messaging call on the bench's transport.

An echo endpoint runs in its own process (threading executor, like a
scheduler worker) on a unique topic; this process calls it one request at
a time. What ``select_destinations`` costs end to end above this floor is
the scheduler's own (serialization, refresh, decision, claim).
"""

import time

import oslo_messaging

from scheduler_bench import conductors
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


def measure(count, warmup=20):
    """Latency summary of ``count`` sequential bare calls."""
    values = settings.client_values(settings.base_values('sqlite://'))
    settings.quiet_client_logs()
    with conductors.ProcessGroup(_server_main, [(values,)]) as group:
        group.wait_ready()
        conf = settings.make_conf(values)
        transport = oslo_messaging.get_rpc_transport(conf)
        client = oslo_messaging.get_rpc_client(
            transport, oslo_messaging.Target(
                topic=values['scheduler']['topic'], version='1.0'))
        samples = []
        try:
            for i in range(warmup + count):
                started = time.perf_counter()
                client.call({}, 'echo', payload=_PAYLOAD)
                if i >= warmup:
                    samples.append(time.perf_counter() - started)
        finally:
            transport.cleanup()
            group.go()
            group.results(60)
            servers.forget_topic(values['scheduler']['topic'])
    return stats.summarize(samples)
