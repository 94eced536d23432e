"""The RPC servers: messages off the bus, each answered and acknowledged.

The servers of a worker on ``scheduler.transport`` (kombu), in
oslo.messaging's wire format: set up from the configuration with the
transport and serializer both sides share (``messaging``), acknowledging
a call once answered and a cast once handled (``late_ack``), reports in
batches acknowledged after their commit (``report_batches``), bodies
bounded before they are decoded (``inbound``), and the log lines of the
faults they expect (``log_filters``). Each message goes to the edge
(``scheduler.edge``), which checks it and calls the manager. Nothing
here schedules or reads a request; the client library imports only
``messaging``.
"""
