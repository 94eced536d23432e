"""Scheduling algorithms. ``filter_scheduler.FilterScheduler`` is the first:
filter, weigh, then claim atomically in the database."""
