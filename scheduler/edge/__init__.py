"""The RPC edge: a message's envelope and arguments in, one checked
request out, every fault an answer.

What stands between the servers that take messages off the bus
(``scheduler.rpc``) and the manager: the dispatcher that finds the
method and turns every fault into a clear answer (``dispatcher``), the
checks each message gets once (``validation``, from the JSON Schemas of
``schemas``), the arguments read once into the manager's form
(``arguments``), policy (``policy``), the call-monitor heartbeats of the
calls running (``call_monitor``), and the value all of that produces and
the manager takes whole (``request.EdgeRequest``). Nothing here
schedules, stores or talks to the broker; the servers import it, it
imports no server.
"""
