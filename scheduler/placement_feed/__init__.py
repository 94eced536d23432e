"""The Placement feed: Placement's providers, pushed to the scheduler.

``scheduler-placement-feed`` reads a Placement service through its REST
API (``reader``), folds each provider tree into one tracker report
(``tree``) and pushes what changed through ``scheduler.client`` as
``update_resource_stats`` reports and aggregate casts (``feed``). It is
incremental: a cycle lists every provider once and re-reads only those
whose generation moved. It imports the client, never the server.
"""
