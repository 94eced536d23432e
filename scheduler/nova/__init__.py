"""The Nova adapter: nova's scheduler RPC API served by each worker.

Nova's wire format read and written (``wire``), the endpoint beside the
scheduler's own on ``[nova] topic`` (``endpoint``), and the allocations
written back to Placement before nova is answered (``placement``). It
passes nova's requests through the same RPC edge (``scheduler.rpc``) as
the scheduler's own API and plans with the worker's driver; nothing of
nova is imported.
"""
