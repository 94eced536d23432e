"""``scheduler-bench``: measure the scheduler against its scale targets.

One module per scenario (``latency``, ``storm``, ``fill``, ``churn``,
``batch``), each with ``run(options) -> dict`` and ``report(result)``, and
small shared modules:

* ``cluster``: a fresh, uniquely named database per run, bulk-populated
  with N providers straight through SQLAlchemy Core, audited for
  overcommit, dropped afterwards;
* ``servers``: real ``scheduler-server`` subprocesses on RabbitMQ with a
  unique topic;
* ``conductors``: load generators calling ``SchedulerClient`` from threads
  in one or more processes;
* ``workload``: host shapes, flavors and request specs;
* ``stats``, ``oracle``: percentiles and the offline capacity oracle;
* ``report``, ``progress``: tables, JSON, charts and the progress bar.

The benchmark reads the scheduler only through its public surfaces (the
client, the manager, the driver, the host cache, the database schema);
the one exception is ``latency.decide``, which times the driver's
in-memory planning step on its own.
"""
