"""Pure scheduling rules: no database, no RPC, no threads.

What a request asks for and what a host offers, as plain functions and
values: per-request state (``request_state``), resource classes and
resource groups, the fit rule (``fit``), CPU policy, PCI, host metrics,
generic inventories and the names trackers use. Every other layer may
import these; they import only ``scheduler.exception`` and
``scheduler.objects``.
"""
