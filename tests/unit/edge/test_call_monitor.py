"""Call-monitor heartbeats from one thread: a call running past half its
caller's timeout gets heartbeats until it answers, and none after; a call
without a timeout gets none. Over a real RPC server, a caller whose call
outlives its call-monitor timeout still gets the answer."""

import threading

import oslo_messaging
import pytest
from oslo_messaging.rpc import server as rpc_server

from scheduler.edge import call_monitor
from scheduler import context
from scheduler.edge import dispatcher
from scheduler.rpc import messaging


class _Incoming:
    def __init__(self, client_timeout):
        self.client_timeout = client_timeout
        self.beats = 0
        self.beat = threading.Event()

    def heartbeat(self):
        self.beats += 1
        self.beat.set()


@pytest.mark.parametrize('timeout, interval', [
    (None, None), ('junk', None), (1, None), (2, 1.0), ('30', 15.0)])
def test_heartbeat_interval_is_half_the_timeout(timeout, interval):
    assert call_monitor.heartbeat_interval(timeout) == interval


def test_running_call_gets_heartbeats_until_done():
    monitor = call_monitor.CallMonitor()
    incoming = _Incoming(client_timeout=2)
    watch = monitor.watch(incoming)
    assert incoming.beat.wait(10)
    monitor.done(watch)
    beats = incoming.beats
    # the monitor thread is free again: a later call is served, the
    # finished one is not
    later = _Incoming(client_timeout=2)
    later_watch = monitor.watch(later)
    assert later.beat.wait(10)
    monitor.done(later_watch)
    assert incoming.beats == beats


def test_call_without_timeout_is_not_watched():
    monitor = call_monitor.CallMonitor()
    assert monitor.watch(_Incoming(client_timeout=None)) is None
    monitor.done(None)


def test_finished_call_gets_no_heartbeat():
    clock = [0.0]
    monitor = call_monitor.CallMonitor(clock=lambda: clock[0])
    incoming = _Incoming(client_timeout=4)
    monitor.done(monitor.watch(incoming))
    clock[0] = 100.0
    sentinel = _Incoming(client_timeout=2)
    monitor.watch(sentinel)      # due at 101: wakes the thread up
    clock[0] = 200.0
    with monitor._cond:
        monitor._cond.notify()
    assert sentinel.beat.wait(10)
    assert incoming.beats == 0


class _Slow:
    """An endpoint whose one RPC method (only RPC methods are served)
    answers when released."""

    target = oslo_messaging.Target(version='1.3')

    def __init__(self):
        self.release = threading.Event()

    def get_service_versions(self, ctxt):
        self.release.wait(10)
        return 'done'


def test_call_outliving_its_monitor_timeout_is_answered(conf, transport):
    endpoint = _Slow()
    # oslo.messaging's own server around the scheduler's dispatcher
    server = rpc_server.RPCServer(
        transport, oslo_messaging.Target(topic='monitor-test',
                                         server=conf.host),
        dispatcher.SchedulerDispatcher([endpoint], messaging.get_serializer(),
                                       conf.limits, conf.host))
    server.start()
    try:
        client = oslo_messaging.get_rpc_client(
            transport, oslo_messaging.Target(topic='monitor-test'),
            timeout=10, call_monitor_timeout=2)
        # answer after the first heartbeats were due (1 s, 2 s): without
        # them the caller would give up after 2 s
        threading.Timer(3.5, endpoint.release.set).start()
        assert client.call(context.get_admin_context(),
                           'get_service_versions') == 'done'
    finally:
        server.stop()
        server.wait()
