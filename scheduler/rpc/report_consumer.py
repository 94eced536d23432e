"""The report topic's RPC server: a cast is acknowledged once handled.

oslo.messaging's rabbit driver acknowledges every RPC message in its
consumer callback, as soon as the message reaches the worker and before
any endpoint runs (``RpcAMQPListener.__call__``, oslo.messaging bug
1695746); an endpoint that raises cannot make the broker redeliver. With
the default unlimited prefetch a worker thus acknowledges its whole
backlog of tracker reports at once, and loses it if it dies.

``ReportServer`` serves the report topic with the acknowledgement moved
after the endpoint:

* a **cast** is acknowledged once its endpoint returned, so a report is
  acknowledged only once ``update_resource_stats`` has seen it committed.
  If the worker dies first, the broker redelivers it to another worker.
* an endpoint that raises ``exception.ReportNotStored`` (the write failed
  or did not finish in time) gets its message **requeued once**; a message
  the broker already redelivered (after a requeue or a worker's death) is
  acknowledged and dropped with an error line instead, so a report that
  cannot be stored is never redelivered forever. Any other exception is
  logged and the message acknowledged, as oslo.messaging does.
* a **call** on the report topic is acknowledged first, as usual: a caller
  waits for its answer, and a redelivered call could act twice.

Only the rabbit driver (kombu, including the in-memory transport of the
unit tests) is adapted; with another driver the server behaves as a plain
``RPCServer`` and says so at start-up.
"""

import collections
import threading

from oslo_log import log as logging
from oslo_messaging._drivers import amqpdriver
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_messaging.rpc import server as rpc_server

from scheduler import exception

LOG = logging.getLogger(__name__)

# a waiting report holds a thread but no CPU: enough threads that a batch
# gathers many reports while the previous one is written (group commit)
REPORT_THREADS = 64
# messages this server requeued, remembered by unique id: kombu's in-memory
# broker does not flag a requeued message as redelivered
REQUEUED_REMEMBERED = 10000


class _DeferredAckListener(amqpdriver.RpcAMQPListener):
    """Hands messages over unacknowledged; the server acknowledges them.
    No duplicate cache: a requeued message must be delivered again, and
    reports are idempotent."""

    message_cls = amqpdriver.NotificationAMQPIncomingMessage
    use_cache = False

    def __call__(self, message):
        amqpdriver.AMQPListener.__call__(self, message)


def _redelivered(message):
    raw = getattr(message.message, '_raw_message', None)
    info = getattr(raw, 'delivery_info', None) or {}
    return bool(info.get('redelivered'))


class ReportServer(rpc_server.RPCServer):
    """An ``RPCServer`` acknowledging casts after their endpoint (module
    docstring). Start it with ``start(override_pool_size=pool_size)``."""

    pool_size = REPORT_THREADS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._requeued = collections.OrderedDict()
        self._requeued_lock = threading.Lock()

    def _first_delivery(self, message):
        """True (and remembered) if ``message`` was never delivered before."""
        if _redelivered(message):
            return False
        with self._requeued_lock:
            if message.unique_id in self._requeued:
                return False
            self._requeued[message.unique_id] = True
            if len(self._requeued) > REQUEUED_REMEMBERED:
                self._requeued.popitem(last=False)
        return True

    def _create_listener(self):
        adapter = super()._create_listener()
        listener = getattr(adapter, '_poll_style_listener', None)
        if type(listener) is amqpdriver.RpcAMQPListener:
            listener.__class__ = _DeferredAckListener
        else:
            LOG.warning('Transport driver %s: reports are acknowledged '
                        'before they are written', type(listener).__name__)
        return adapter

    def _process_incoming(self, incoming):
        message = incoming[0]
        if getattr(message, 'orig_msg_id', None) or not isinstance(
                message, amqpdriver.NotificationAMQPIncomingMessage):
            return super()._process_incoming(incoming)
        try:
            self.dispatcher.dispatch(message)
        except exception.ReportNotStored as exc:
            if self._first_delivery(message):
                LOG.warning('%s; the broker will deliver it again', exc)
                message.requeue()
                return
            LOG.error('%s; dropped, as it was delivered twice', exc)
        except rpc_dispatcher.ExpectedException:
            # an answer, not a fault (a policy refusal): already logged
            # once where it was raised, as oslo.messaging treats it too
            LOG.debug('Expected exception during report handling')
        except Exception:
            LOG.exception('Exception during message handling')
        message.acknowledge()
