"""GroupPlacement: a request's server group while it is being placed.

Built per planning attempt from the members the database knows: placed by
earlier claims, or reported on a host by its tracker (as nova counts them:
the group's members among the host's instances), and at least one on each
host the caller lists, unless the request moves one of the group's own
members (a resize, migration, rebuild: nova lists that member's host too,
and an instance never counts against itself); every instance placed by
the request is added, so the instances of one multi-instance request
respect the policy among themselves too.

The group's ``policy`` and ``rules`` were checked at the RPC edge (the
``INSTANCE_GROUP`` schema of ``scheduler.edge.schemas``): one of
``HARD + SOFT``, ``max_server_per_host`` a positive integer.
"""

import collections

import numpy as np

from scheduler.db import claims

HARD = ('affinity', 'anti-affinity')
SOFT = ('soft-affinity', 'soft-anti-affinity')


class GroupPlacement:

    def __init__(self, uuid, policy, hosts, max_per_host=1):
        self.uuid = uuid
        self.policy = policy
        self.hosts = collections.Counter(hosts)
        self.max_per_host = max_per_host

    @classmethod
    def from_group(cls, group, placed_hosts, reported_members=None,
                   listed_hosts=True):
        """``listed_hosts``: count the hosts the caller lists (module
        docstring)."""
        policy = group.get('policy')
        max_per_host = int(group.get('rules', {}).get(
            'max_server_per_host', '1'))
        hosts = collections.Counter(placed_hosts)
        # a member both claimed and reported must count once
        for host, count in (reported_members or {}).items():
            hosts[host] = max(hosts[host], count)
        for host in group.get('hosts', []) if listed_hosts else ():
            hosts[host] = max(hosts[host], 1)
        return cls(group.get('uuid'), policy, hosts, max_per_host)

    @property
    def is_hard(self):
        return self.policy in HARD

    def allows(self, table, rows):
        """Mask over ``rows``: hosts the hard policy still allows."""
        if self.policy == 'affinity' and self.hosts:
            # any host the group is on (a count of 0 included)
            return table.per_host(dict.fromkeys(self.hosts, 1.0), rows) > 0
        if self.policy == 'anti-affinity':
            return table.per_host(self.hosts, rows) < self.max_per_host
        return np.ones(len(rows), dtype=bool)

    def placed(self, host):
        self.hosts[host] += 1

    def claim_policy(self):
        """What the claim transaction must enforce (None: nothing)."""
        if not self.is_hard or not self.uuid:
            return None
        return claims.GroupPolicy(self.uuid, self.policy, self.max_per_host)
