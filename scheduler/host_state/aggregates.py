"""AggregateIndex: every aggregate a worker knows, and host membership.

Fed by ``scheduler.db.aggregates.load_aggregate_changes``; filters and
weighers read it through ``table.aggregates``: ``of_host(host)`` for one
host, ``with_metadata(key)`` to find the few aggregates that carry a key.

Per-row data derived from the aggregates (a weigher's multiplier per row,
the rows that share one set of aggregates) is computed once after the
aggregates change or rows are added, not per request: ``derived(name,
size, compute)`` keeps what ``compute()`` returned until then (kube-
scheduler's NodeInfo). Plugins read it; they must not modify it.
"""

import collections

import numpy as np

_MISSING = object()


class AggregateIndex:

    def __init__(self):
        self.by_uuid = {}
        self._of_host = collections.defaultdict(dict)
        self._derived = {}

    def apply(self, changes):
        """Apply aggregate dicts; returns the hosts whose membership or
        metadata may have changed."""
        touched = set()
        if changes:
            self._derived.clear()
        for agg in changes:
            old = self.by_uuid.pop(agg['uuid'], None)
            if old is not None:
                for host in old['hosts']:
                    self._of_host[host].pop(agg['uuid'], None)
                touched.update(old['hosts'])
            if agg.get('deleted'):
                continue
            self.by_uuid[agg['uuid']] = agg
            for host in agg['hosts']:
                self._of_host[host][agg['uuid']] = agg
            touched.update(agg['hosts'])
        return touched

    def derived(self, name, size, compute):
        """``compute()``, kept while the aggregates are unchanged and the
        table has ``size`` rows (rows are only ever appended)."""
        key = (name, size)
        value = self._derived.get(key, _MISSING)
        if value is _MISSING:
            for stale in [k for k in self._derived if k[0] == name]:
                del self._derived[stale]
            value = self._derived[key] = compute()
        return value

    def of_host(self, host):
        """The aggregates ``host`` belongs to (possibly none)."""
        members = self._of_host.get(host)
        return list(members.values()) if members else []

    def with_metadata(self, key):
        return [a for a in self.by_uuid.values() if key in a['metadata']]

    def metadata_values(self, host, key):
        """Every value of ``key`` in the aggregates of ``host``."""
        return [a['metadata'][key] for a in self.of_host(host)
                if key in a['metadata']]

    def row_groups(self, table):
        """Rows grouped by the set of aggregates their host is in:
        ``(group_of_row, aggregates_of_group)``, an int array over the
        table's rows and a list; group 0 is "in no aggregate"."""
        return self.derived('row_groups', table.size,
                            lambda: self._group_rows(table))

    def _group_rows(self, table):
        group_of_row = np.zeros(table.size, dtype=np.intp)
        groups = {(): 0}
        members = [[]]
        for host, aggs in self._of_host.items():
            rows = table.rows_of_host(host)
            if not aggs or not rows:
                continue
            key = tuple(sorted(aggs))
            if key not in groups:
                groups[key] = len(members)
                members.append(list(aggs.values()))
            group_of_row[rows] = groups[key]
        return group_of_row, members

    def zone_of(self, host):
        zones = sorted(set(self.metadata_values(host, 'availability_zone')))
        return zones[0] if zones else None
