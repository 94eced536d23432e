"""Publisher confirms with a bounded wait, on py-amqp's public channel API.

A quorum queue confirms a message once a majority of its members wrote
it. A RabbitMQ node cut off from the other nodes of its cluster, while
its clients still reach it, goes on taking their messages and answering
their heartbeats, but confirms nothing it routes to a quorum queue
until it notices that it is in a minority, 1 to 1.25 times Erlang's
``net_ticktime`` after the cut (60 s by default), and pauses
(``cluster_partition_handling = pause_minority``). py-amqp's own wait
for a confirm (``confirm_publish``) bounds the time between two frames,
not the wait: the node's heartbeats keep it waiting until the pause.

``Confirms`` waits for the confirm of each publish on a channel ``wait``
seconds at most, all frames together::

    confirms = Confirms(connection, channel, wait)  # confirm.select
    producer.publish(body, ...)                     # a plain basic.publish
    confirms.published()                            # reads frames until
                                                    # the broker confirmed

and raises ``Unconfirmed`` (a ``ConnectionError``) once ``wait`` has
passed while frames kept coming (the node lives, but does not confirm):
its caller publishes again through another node of ``transport_url``,
and tells the broker (``Broker.unconfirmed``) to try that node last for
a while. ``Silent`` (a ``ConnectionError`` too) says that not a frame
came in ``wait`` seconds: the connection is dead (a host cut off the
network), and its caller drops it. A message
published twice that way is harmless where the scheduler publishes one:
a reply's caller takes the first and drops the other, and a call
delivered twice is answered with the claims already written
(``doc/source/delivery.rst``). A ``basic.nack`` raises py-amqp's
``MessageNacked``.

While it waits, the frames it reads are dispatched as any read would
dispatch them (a consumer's deliveries too): call it from the thread
that owns the connection.
"""

import socket
import time

from amqp import exceptions as amqp_exceptions

#: seconds a publish waits for its confirm, by default. A quorum queue
#: on a healthy cluster confirms within milliseconds, and within a
#: second or two of its leader's node dying (a new leader is elected
#: among the others); 5 s leaves room for a busy broker on few cores and
#: keeps a call's wait, its reply published again once, within 10 s.
CONFIRM_WAIT = 5.0


class Unconfirmed(ConnectionError):
    """The broker did not confirm a publish in time: its node is cut off
    from the majority of its cluster (or stalled); the connection is of
    no use for a quorum queue until the node pauses."""


class Silent(ConnectionError):
    """Not a frame from the broker while a publish waited for its
    confirm: the connection died without a word."""


class Confirms:
    """Publisher confirms of one channel (module docstring)."""

    def __init__(self, connection, channel, wait=CONFIRM_WAIT):
        self.connection = connection
        self.wait = wait
        self._sent = 0
        self._outstanding = set()
        self._nacked = set()
        channel.events['basic_ack'].add(self._acked)
        channel.events['basic_nack'].add(self._nacked_now)
        channel.confirm_select()

    def published(self):
        """Wait for the confirm of the message just published on the
        channel (``wait`` seconds at most, ``Unconfirmed`` then)."""
        self._sent += 1
        tag = self._sent
        self._outstanding.add(tag)
        deadline = time.monotonic() + self.wait
        heard = False
        while tag in self._outstanding:
            left = deadline - time.monotonic()
            if left <= 0:
                self._outstanding.discard(tag)
                if not heard:
                    raise Silent('not a frame from the broker within %.1f s'
                                 % self.wait)
                raise Unconfirmed(
                    'the broker did not confirm a message within %.1f s '
                    '(a node cut off from its cluster?)' % self.wait)
            try:
                self.connection.drain_events(timeout=left)
                heard = True
            except socket.timeout:
                pass
        if tag in self._nacked:
            self._nacked.discard(tag)
            raise amqp_exceptions.MessageNacked(
                'the broker refused a message (basic.nack)')

    def _settled(self, tag, multiple):
        if multiple:
            done = {t for t in self._outstanding if t <= tag}
        else:
            done = {tag} & self._outstanding
        self._outstanding -= done
        return done

    def _acked(self, delivery_tag, multiple):
        self._settled(delivery_tag, multiple)

    def _nacked_now(self, delivery_tag, multiple):
        self._nacked |= self._settled(delivery_tag, multiple)


def on_channel(connection, channel, wait=CONFIRM_WAIT):
    """``Confirms`` of ``channel`` (of kombu ``connection``), or None on a
    transport without publisher confirms (kombu's in-memory one)."""
    if connection.transport.driver_type != 'amqp':
        return None
    return Confirms(connection, channel, wait)
