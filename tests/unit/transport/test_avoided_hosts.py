"""A broker host that did not confirm a publish in time
(``Broker.unconfirmed``) is tried last by the connections made after,
for ``AVOID_FOR`` seconds; the others keep their shuffled order."""

import collections

import kombu

from scheduler import conf as sched_conf
from scheduler.transport import broker

URL = 'rabbit://u:p@a:5672,u:p@b:5673,u:p@c:5674/'


def _broker():
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    conf.set_override('transport_url', URL)
    return broker.Broker(conf)


def _first_and_last(brokers, times=60):
    seen = collections.Counter()
    for _ in range(times):
        hosts = [url.rsplit('@', 1)[-1].rstrip('/')
                 for url in brokers._in_order(brokers._hosts_and_urls())]
        seen['first', hosts[0]] += 1
        seen['last', hosts[-1]] += 1
    return seen


def test_an_unconfirming_host_is_tried_last(monkeypatch):
    brokers = _broker()
    brokers.unconfirmed(kombu.Connection('amqp://u:p@b:5673//'))
    seen = _first_and_last(brokers)
    assert seen['last', 'b:5673'] == 60
    assert seen['first', 'a:5672'] and seen['first', 'c:5674']


def test_it_is_forgotten_after_avoid_for(monkeypatch):
    brokers = _broker()
    now = [1000.0]
    monkeypatch.setattr(broker.time, 'monotonic', lambda: now[0])
    brokers.unconfirmed(kombu.Connection('amqp://u:p@b:5673//'))
    now[0] += broker.AVOID_FOR + 1
    seen = _first_and_last(brokers)
    assert seen['first', 'b:5673'] and seen['last', 'b:5673'] < 60
