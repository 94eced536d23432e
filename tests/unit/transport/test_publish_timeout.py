"""A publish (a reply) gives up after two heartbeat timeouts
(``Broker.publish_timeout``): on a connection that died silently it
would otherwise hold the consumer loop's thread, and the heartbeats that
notice the loss, until TCP gave up."""

import pytest

from scheduler import conf as sched_conf
from scheduler.transport import broker


def _broker(url, **rabbit):
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('transport_url', url)
    for name, value in rabbit.items():
        conf.set_override(name, value, 'oslo_messaging_rabbit')
    return broker.Broker(conf)


@pytest.mark.parametrize('heartbeat, expected', [
    (None, 20.0),       # the scheduler's default heartbeat timeout, 10 s
    (3, 6.0),
    (0, broker.Broker.PUBLISH_TIMEOUT),
])
def test_two_heartbeat_timeouts(heartbeat, expected):
    rabbit = {} if heartbeat is None else {
        'heartbeat_timeout_threshold': heartbeat}
    assert _broker('rabbit://u:p@h:5672/', **rabbit).publish_timeout == \
        expected


def test_none_in_memory():
    assert _broker('kombu+memory:////').publish_timeout is None
