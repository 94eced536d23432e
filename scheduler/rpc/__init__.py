"""The RPC edge: a message in, a checked call, an answer out.

Everything between the bus and the manager's methods lives here: the
oslo.messaging transport, serializer and servers (``messaging``), the
dispatcher that turns every fault into a clear answer (``dispatcher``),
the argument checks run once per message (``validation``), policy
(``policy``), call-monitor heartbeats (``call_monitor``), the limits on a
body before it is decoded (``inbound``) and the report topic's consumer
that acknowledges after commit (``late_ack``). Nothing here
schedules; the client library imports only ``messaging`` (the transport
and serializer both sides share).
"""
