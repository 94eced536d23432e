"""Filter plugins: which hosts can take a request.

A filter is pure: it reads the immutable host table (or one host view) and
the per-request state, nothing else, and gets its options in its
constructor. Two forms, see ``scheduler.filters.base.BaseFilter``.
Filters are stevedore entry points in the ``scheduler.filters`` namespace.
"""
