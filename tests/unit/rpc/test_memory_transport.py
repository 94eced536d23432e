"""The embedded transport polls an empty queue every POLL_INTERVAL
instead of spinning (scheduler.rpc.memory_transport)."""

import kombu

from scheduler.rpc import memory_transport
from scheduler.rpc import messaging


def test_embedded_url_names_the_polled_transport(conf):
    messaging.get_transport(conf)   # registers the alias
    url = messaging.EMBEDDED_TRANSPORT_URL.replace('kombu+', '')
    with kombu.Connection(url) as connection:
        transport = connection.transport
    assert isinstance(transport, memory_transport.Transport)
    assert transport.polling_interval == memory_transport.POLL_INTERVAL > 0
