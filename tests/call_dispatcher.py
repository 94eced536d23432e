"""oslo.messaging's own ``RPCDispatcher`` for the scheduler's servers.

The servers of ``scheduler.rpc.late_ack`` hand every message to their
dispatcher with the server's record of it
(``dispatch(incoming, call)``, ``scheduler.model.call.Call``). The
transport and contract tests serve through oslo.messaging's own
dispatcher, which takes the message only: ``CallDispatcher`` is it,
with the record taken and left unread.
"""

from oslo_messaging.rpc import dispatcher as rpc_dispatcher


class CallDispatcher(rpc_dispatcher.RPCDispatcher):

    def dispatch(self, incoming, call=None):
        return super().dispatch(incoming)
