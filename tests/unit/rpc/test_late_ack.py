"""Late acknowledgement (kombu's in-memory broker; the real one:
tests/functional/test_call_redelivery.py): ReportServer acknowledges a
cast after its endpoint and delivers a report that was not stored once
more, never forever; CallServer answers a call before acknowledging it,
bounds the broker's prefetch, and serves no call its caller gave up on."""

import datetime
import threading
import time

import oslo_messaging
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_utils import timeutils

from scheduler import exception
from scheduler.rpc import messaging
from scheduler.rpc import late_ack
from tests import waiting
from tests import call_dispatcher


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
        with self.lock:
            self.calls.append('ping')
        return 'pong'


def _serve(transport, endpoint, server_cls=late_ack.ReportServer,
           topic='reports', threads=None):
    server = messaging.server(
        transport.conf, transport,
        oslo_messaging.Target(topic=topic, server='w1'),
        call_dispatcher.CallDispatcher(
            [endpoint], messaging.get_serializer()), server_cls)
    server.start(override_pool_size=threads or server.pool_size)
    return server


def _calls_after(endpoint, count, quiet=0.5):
    """The calls ``endpoint`` had once it had ``count``, and ``quiet``
    seconds more: the window in which a call too many would show."""
    def calls():
        with endpoint.lock:
            return list(endpoint.calls)
    waiting.wait_for(lambda: len(calls()) >= count, 10,
                     '%d calls' % count)
    time.sleep(quiet)
    return calls()


def test_a_report_not_stored_is_delivered_once_more_then_dropped(
        conf, transport):
    endpoint = _Endpoint(fail=True)
    server = _serve(transport, endpoint)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='reports'))
    try:
        client.cast({}, 'update_resource_stats', name='h1', stats={})
        assert _calls_after(endpoint, 2) == ['h1', 'h1']
        # calls on the topic are still answered
        assert client.prepare(timeout=10).call({}, 'ping') == 'pong'
    finally:
        server.stop()
        server.wait()


def test_a_stored_report_is_handled_once(conf, transport):
    endpoint = _Endpoint(fail=False)
    server = _serve(transport, endpoint)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='reports'))
    try:
        for host in ('h1', 'h2'):
            client.cast({}, 'update_resource_stats', name=host, stats={})
        assert sorted(_calls_after(endpoint, 2)) == ['h1', 'h2']
    finally:
        server.stop()
        server.wait()


def _serve_calls(transport, endpoint):
    return _serve(transport, endpoint, late_ack.CallServer, 'decisions', 3)


def _sent_ago(seconds):
    return (timeutils.utcnow() - datetime.timedelta(seconds=seconds)
            ).isoformat()


def test_a_call_is_answered_then_acknowledged_with_a_bounded_prefetch(
        conf, transport):
    endpoint = _Endpoint(fail=False)
    server = _serve_calls(transport, endpoint)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='decisions'))
    try:
        for _ in range(3):
            assert client.prepare(timeout=10).call({}, 'ping') == 'pong'
        # the broker pushes no more calls than the server has threads
        assert server.loop.prefetch == 3
        assert endpoint.calls == ['ping'] * 3
    finally:
        server.stop()
        server.wait()


def test_a_call_its_caller_gave_up_on_is_not_served(conf, transport):
    endpoint = _Endpoint(fail=False)
    server = _serve_calls(transport, endpoint)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='decisions'))
    try:
        # sent 40 s ago by a caller that waits 2 s (+ 30 s call monitor)
        stale = client.prepare(timeout=2, call_monitor_timeout=30)
        try:
            stale.call({'sent_at': _sent_ago(40)}, 'ping')
        except oslo_messaging.MessagingTimeout:
            pass
        # one sent 20 s ago is within what its caller waits: served
        fresh = client.prepare(timeout=10, call_monitor_timeout=30)
        assert fresh.call({'sent_at': _sent_ago(20)}, 'ping') == 'pong'
        assert endpoint.calls == ['ping']
    finally:
        server.stop()
        server.wait()


class _Message:
    def __init__(self, sent_at, expiration_ms, client_timeout):
        self.ctxt = {'sent_at': sent_at}
        self.client_timeout = client_timeout
        self.message = type('Raw', (), {})()
        self.message.raw = type('Props', (), {})()
        self.message.raw.properties = (
            {} if expiration_ms is None else {'expiration': expiration_ms})


def test_caller_gave_up_when_older_than_all_its_caller_waits():
    now = timeutils.utcnow()
    sent = (now - datetime.timedelta(seconds=95)).isoformat()
    # RPC timeout 60 s + call monitor 30 s: gone after 90 s
    assert late_ack.caller_gave_up(_Message(sent, '60000', 30), now)
    assert not late_ack.caller_gave_up(_Message(sent, '60000', 40), now)
    # a message that does not say (a cast, an older client): served
    assert not late_ack.caller_gave_up(_Message(sent, None, 30), now)
    assert not late_ack.caller_gave_up(_Message(None, '60000', 30), now)
    assert not late_ack.caller_gave_up(_Message('junk', '60000', 30), now)
    # a stamp UTC cannot hold: not stale, and nothing escapes
    for stamp in ('0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00'):
        assert not late_ack.caller_gave_up(_Message(stamp, '60000', 30), now)


class _Claimer:
    """Answers after ``delay`` seconds."""

    def __init__(self, delay):
        self.delay = delay

    def place(self, ctxt, consumer=None):
        time.sleep(self.delay)      # a late answer, on purpose
        return 'h1'


class _ClaimingDispatcher(rpc_dispatcher.RPCDispatcher):
    """Notes one claim per call in the server's record of it, as
    ``claims.claim_resources`` does, then dispatches."""

    def dispatch(self, incoming, call):
        call.wrote({(incoming.message['args']['consumer'], 7)},
                   timeutils.utcnow())
        return super().dispatch(incoming)


def test_the_claims_of_a_call_answered_too_late_are_given_back(
        conf, transport, monkeypatch):
    monkeypatch.setattr(late_ack, 'REPLY_MARGIN', 0.2)
    released = []
    server = messaging.server(
        transport.conf, transport,
        oslo_messaging.Target(topic='decisions', server='w1'),
        _ClaimingDispatcher(
            [_Claimer(delay=1.6)], messaging.get_serializer()),
        late_ack.CallServer)
    server.release_claims = released.append
    server.start(override_pool_size=3)
    client = oslo_messaging.get_rpc_client(
        transport, oslo_messaging.Target(topic='decisions'))
    try:
        try:
            # the caller waits 1 s: the answer at 1.6 s reaches nobody
            client.prepare(timeout=1).call({}, 'place', consumer='c-late')
        except oslo_messaging.MessagingTimeout:
            pass
        # one answered in time keeps its claim
        server.dispatcher.endpoints[0].delay = 0
        assert client.prepare(timeout=5).call(
            {}, 'place', consumer='c-in-time') == 'h1'
        waiting.wait_for(lambda: released, 5, 'the late claims given back')
        assert [[w.consumer_uuid for w in written]
                for written in released] == [['c-late']]
    finally:
        server.stop()
        server.wait()


def test_replied_too_late_only_past_the_callers_timeout(monkeypatch):
    message = _Message(None, '10000', None)
    message.received = 100.0
    message.replied = None
    assert not late_ack.replied_too_late(message)      # not answered
    message.replied = 100.0 + 10 + late_ack.REPLY_MARGIN - 0.1
    assert not late_ack.replied_too_late(message)
    message.replied = 100.0 + 10 + late_ack.REPLY_MARGIN + 0.1
    assert late_ack.replied_too_late(message)
    # a call that does not say how long its caller waits: never
    assert not late_ack.replied_too_late(_Message(None, None, 30))
