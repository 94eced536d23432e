"""The transport: bytes between the broker and a server, on kombu's public
API, in oslo.messaging's rabbit wire format.

``broker`` turns ``[DEFAULT] transport_url`` and ``[oslo_messaging_rabbit]``
into kombu connections and the exchanges and queues oslo.messaging
declares for an RPC target (the same names, types and arguments, quorum
and stream queues included, so that oslo.messaging's own servers and
clients share them); ``wire`` reads oslo.messaging's message envelope and
writes its replies; ``consumer_loop`` is the one thread of a server that
reads messages and writes replies and acknowledgements. Nothing here
reads what a message asks for: the edge (``scheduler.rpc``) does that.
"""
