"""AggregateIndex: every aggregate a worker knows, and host membership.

Fed by ``scheduler.db.aggregates.load_aggregate_changes``; filters and
weighers read it through ``table.aggregates``: ``of_host(host)`` for one
host, ``with_metadata(key)`` to find the few aggregates that carry a key.
"""

import collections


class AggregateIndex:

    def __init__(self):
        self.by_uuid = {}
        self._of_host = collections.defaultdict(dict)

    def apply(self, changes):
        """Apply aggregate dicts; returns the hosts whose membership or
        metadata may have changed."""
        touched = set()
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

    def zone_of(self, host):
        zones = sorted(set(self.metadata_values(host, 'availability_zone')))
        return zones[0] if zones else None
