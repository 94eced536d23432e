"""Scheduling algorithms behind one interface: a request in, selections out.

``filter_scheduler.FilterScheduler`` is the first: refresh the host table,
preload the plugins' stored data, filter, weigh, assume, then claim
atomically in the database. Beside it: loading the filter and weigher
pipelines (``plugins``), recording each decision (``decision_recorder``),
the NoValidHost diagnosis, and server-group and resource-group planning.
"""
