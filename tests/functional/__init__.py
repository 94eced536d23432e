"""Functional tests: the real ``scheduler-server`` against real services.

Every test starts ``scheduler-server`` as a subprocess on RabbitMQ and a
fresh database (SQLite file, PostgreSQL or MariaDB on 127.0.0.1), pushes
host stats from another process, as resource trackers do, places instances
through ``scheduler.client.SchedulerClient``, as conductors do, and checks
the outcome in the scheduler database itself.

    pytest -q -rA tests/functional

A missing service skips the tests that need it, with the command that
starts it; with ``CI=true`` it fails them instead.
"""
