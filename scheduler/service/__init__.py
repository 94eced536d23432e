"""The ``scheduler-server`` process: what runs, and for how long.

The checks before any worker starts (``startup_checks``), the launcher
and its worker processes (``launcher``), the parent that supervises them
(``supervisor``) and reloads them on SIGHUP (``reload``), the
composition root that builds a worker's parts once (``composition``), the
worker's own service record, heartbeat and metrics endpoint (``heartbeat``,
``metrics_endpoint``), the background writers and sweepers
(``report_writer``, ``claim_sweeper``), notifications, broker TLS and the
masking of secrets in what the process prints. Nothing below this package
imports it.
"""
