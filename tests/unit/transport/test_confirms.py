"""Publisher confirms with a bounded wait (scheduler.transport.confirms),
and the broker host that did not confirm in time tried last
(``Broker.unconfirmed``).

A node cut off from its cluster keeps its clients' connections alive
with heartbeats and confirms nothing for a quorum queue: the wait for a
confirm must end after ``wait`` seconds whatever frames arrive."""

import socket
import time

import pytest
from amqp import exceptions as amqp_exceptions

from scheduler import conf as sched_conf
from scheduler.transport import broker
from scheduler.transport import confirms


class _Channel:
    """py-amqp's public channel API that Confirms uses."""

    def __init__(self):
        self.events = {'basic_ack': set(), 'basic_nack': set()}
        self.confirm_selected = False

    def confirm_select(self):
        self.confirm_selected = True


class _Connection:
    """Frames as a broker sends them: each ``drain_events`` runs the next
    of ``frames`` (or waits its timeout out and raises, as py-amqp does
    when nothing arrives)."""

    def __init__(self, channel, frames=()):
        self.channel = channel
        self.frames = list(frames)
        self.waits = []

    def drain_events(self, timeout=None):
        self.waits.append(timeout)
        if not self.frames:
            time.sleep(timeout)
            raise socket.timeout('timed out')
        self.frames.pop(0)(self.channel)

    @staticmethod
    def ack(tag, multiple=False, event='basic_ack'):
        def frame(channel):
            for callback in list(channel.events[event]):
                callback(tag, multiple)
        return frame

    @staticmethod
    def heartbeat(seconds):
        def frame(channel):
            time.sleep(seconds)
        return frame


def _confirms(frames=(), wait=1.0):
    channel = _Channel()
    connection = _Connection(channel, frames)
    return confirms.Confirms(connection, channel, wait), connection, channel


def test_confirm_mode_on_and_a_confirmed_publish_returns():
    confirming, connection, channel = _confirms([_Connection.ack(1)])
    assert channel.confirm_selected
    confirming.published()
    assert len(connection.waits) == 1


def test_the_wait_is_bounded_although_heartbeats_keep_arriving():
    # a frame every 0.1 s, never the confirm: py-amqp's own wait (a
    # timeout per frame) would wait until the frames stop
    heartbeats = [_Connection.heartbeat(0.1) for _ in range(100)]
    confirming, connection, _ = _confirms(heartbeats, wait=0.5)
    started = time.monotonic()
    with pytest.raises(confirms.Unconfirmed):
        confirming.published()
    assert time.monotonic() - started < 1.0
    assert isinstance(confirms.Unconfirmed('x'), ConnectionError)
    # each read waits what is left of the whole wait, no more
    assert connection.waits == sorted(connection.waits, reverse=True)


def test_silence_is_a_dead_connection():
    """Not a frame within the wait (a host cut off the network): not a
    node that lives and does not confirm, and its caller drops the
    connection rather than keep it."""
    confirming, _, _ = _confirms([], wait=0.2)
    with pytest.raises(confirms.Silent) as raised:
        confirming.published()
    assert not isinstance(raised.value, confirms.Unconfirmed)
    assert isinstance(raised.value, ConnectionError)


def test_a_multiple_ack_confirms_every_message_up_to_it():
    confirming, connection, _ = _confirms([_Connection.ack(1)])
    confirming.published()          # 1
    connection.frames = [lambda channel: None,      # not confirmed yet
                         _Connection.ack(2, multiple=True)]
    confirming.published()          # 2
    assert connection.frames == []


def test_a_nack_is_an_error_of_that_message_only():
    confirming, connection, _ = _confirms(
        [_Connection.ack(1, event='basic_nack'), _Connection.ack(2)])
    with pytest.raises(amqp_exceptions.MessageNacked):
        confirming.published()
    confirming.published()


def _broker(url):
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('transport_url', url)
    return broker.Broker(conf)


class _Connected:
    def __init__(self, host):
        self.host = host


def test_a_host_that_did_not_confirm_is_tried_last():
    rabbit = _broker('rabbit://u:p@h1:5672,u:p@h2:5673,u:p@h3:5674/')
    rabbit.unconfirmed(_Connected('h2:5673'))
    for _ in range(20):
        connection = rabbit.connect()
        assert connection.host != 'h2:5673'
        assert connection.alt[-1].endswith('@h2:5673/')
        connection.release()


def test_the_host_is_tried_first_again_later(monkeypatch):
    monkeypatch.setattr(broker, 'AVOID_FOR', 0.05)
    rabbit = _broker('rabbit://u:p@h1:5672,u:p@h2:5673/')
    rabbit.unconfirmed(_Connected('h2:5673'))
    time.sleep(0.1)
    firsts = {rabbit.connect().host for _ in range(40)}
    assert firsts == {'h1:5672', 'h2:5673'}


def test_the_wait_follows_the_publish_timeout():
    rabbit = _broker('rabbit://u:p@h1:5672/')
    assert rabbit.confirm_wait == confirms.CONFIRM_WAIT
    rabbit.conf.set_override('heartbeat_timeout_threshold', 1,
                             'oslo_messaging_rabbit')
    assert rabbit.confirm_wait == 2.0
