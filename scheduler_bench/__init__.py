"""``scheduler-bench``: measure the scheduler against its scale targets.

One module per scenario (``latency``, ``storm``, ``fill``, ``churn``,
``batch``), each with ``NAME``, ``TARGETS``, ``run(options) -> dict``,
``render(result) -> str`` and ``draw(pyplot, result) -> figure``; the
command line is ``scheduler_bench.cli``. Shared modules:

* ``cluster``: a fresh, uniquely named database per run, bulk-populated
  with N providers straight through SQLAlchemy Core, audited for
  overcommit, dropped afterwards;
* ``deployment``: a populated database plus the in-process manager and the
  ``scheduler-server`` processes (``servers``) that use it;
* ``settings``: the configuration a run uses, as overrides or an ini file;
* ``conductors``: load generators calling ``SchedulerClient`` from threads
  in one or more processes;
* ``inprocess``: the manager in this process, timed phase by phase;
* ``rpcfloor``: a bare oslo.messaging call, the broker's floor;
* ``workload``: host shapes, zones, flavors and request specs;
* ``stats``, ``oracle``: percentiles and the offline capacity oracle;
* ``report``, ``progress``: tables, targets, JSON, charts, progress bar.

The bench reads the scheduler only through its public surfaces (client,
manager endpoint, host cache, database schema, the driver's ``plan``);
to split a request's time into refresh, decision and claim, ``inprocess``
reads the phases the driver itself records (``manager.recorder``).
"""
