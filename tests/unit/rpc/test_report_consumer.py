"""ReportServer: casts on the report topic are acknowledged after their
endpoint, a report that was not stored is delivered once more, never
forever (kombu's in-memory broker; the real one: functional tests)."""

import threading
import time

import oslo_messaging

from scheduler import exception
from scheduler.rpc import messaging
from scheduler.rpc import report_consumer


class _Endpoint:
    def __init__(self, fail):
        self.fail = fail
        self.calls = []
        self.lock = threading.Lock()

    def update_resource_stats(self, ctxt, name=None, stats=None):
        with self.lock:
            self.calls.append(name)
        if self.fail:
            raise exception.ReportNotStored(host=name, node=name,
                                            reason='database down')

    def ping(self, ctxt):
        return 'pong'


def _serve(conf, transport, endpoint):
    server = oslo_messaging.get_rpc_server(
        transport, oslo_messaging.Target(topic='reports', server='w1'),
        [endpoint], executor='threading',
        serializer=messaging.get_serializer(),
        server_cls=report_consumer.ReportServer)
    server.start(override_pool_size=server.pool_size)
    return server


def _calls_after(endpoint, seconds):
    time.sleep(seconds)
    with endpoint.lock:
        return list(endpoint.calls)


def test_a_report_not_stored_is_delivered_once_more_then_dropped(
        conf, transport):
    endpoint = _Endpoint(fail=True)
    server = _serve(conf, transport, endpoint)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='reports'))
    try:
        client.cast({}, 'update_resource_stats', name='h1', stats={})
        assert _calls_after(endpoint, 1.5) == ['h1', 'h1']
        # calls on the topic are still answered
        assert client.prepare(timeout=10).call({}, 'ping') == 'pong'
    finally:
        server.stop()
        server.wait()


def test_a_stored_report_is_handled_once(conf, transport):
    endpoint = _Endpoint(fail=False)
    server = _serve(conf, transport, endpoint)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='reports'))
    try:
        for host in ('h1', 'h2'):
            client.cast({}, 'update_resource_stats', name=host, stats={})
        assert sorted(_calls_after(endpoint, 1.0)) == ['h1', 'h2']
    finally:
        server.stop()
        server.wait()
