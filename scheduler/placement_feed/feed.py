"""The incremental feed: one listing per cycle, reads only what moved.

``PlacementFeed(reader, client, ctxt)``; ``run_cycle()`` does one cycle
and returns a ``Cycle`` with what it cost and did:

1. list every provider (one request);
2. read (four requests each) the providers that are new, or whose
   generation differs from the one last read: Placement bumps a
   provider's generation on every change of its inventories, traits,
   aggregates or parent, and on every allocation against it, so an
   unchanged generation means nothing to read. ``read_concurrency``
   providers are read at a time (threads; 1: one after the other);
3. the usage sweep: Placement moves no generation when allocations are
   deleted (``DELETE /allocations/{consumer}``, or a ``PUT`` that moves
   a consumer's allocations off a provider), so freed capacity is
   invisible to step 2. Every provider's usages are read again (one
   request) at least every ``usage_sweep_interval`` seconds, the oldest
   first, spread evenly over the cycles (0: every provider every cycle);
   a provider whose usages differ dirties its tree;
4. a tree (``tree``) is *dirty* when a member was read, appeared, went
   away or moved to another tree; each dirty tree whose members are all
   read is folded into one report, sent with ``update_resource_stats``
   under its root provider's name when it differs from the last one
   sent. Dirty trees stay dirty until sent, so a cycle cut short by an
   error loses nothing;
5. a tree whose root is gone gets its last report once more, with
   ``disabled``, and is forgotten;
6. reports sent more than ``resend_interval`` seconds ago are sent again
   from memory (no request), so the scheduler keeps counting the host as
   reporting;
7. with ``push_aggregates``, the aggregates whose member hosts changed
   are sent with ``update_aggregates`` (membership only, ``name`` the
   UUID), and those left without members with ``delete_aggregate``.

A provider Placement deletes between the listing and its reads is
skipped until the next listing; any other error of a read, or a cast
that fails, ends the cycle (the caller logs it and tries again next
cycle) with what was read so far kept (in listing order, up to the
failed read), and the trees and aggregates not yet sent still due. A
report the client refuses (a name the scheduler cannot take) is logged
and skipped. The feed holds every provider's last read in memory.
"""

import concurrent.futures
import dataclasses
import math
import time

from oslo_log import log as logging

from scheduler import exception
from scheduler.placement_feed import reader as reader_mod
from scheduler.placement_feed import tree

LOG = logging.getLogger(__name__)
# keeps a cast well below [limits] max_message_bytes
AGGREGATES_PER_CAST = 100


@dataclasses.dataclass
class Cycle:
    """What one cycle cost and did."""
    requests: int = 0
    read: int = 0
    swept: int = 0
    reported: int = 0
    resent: int = 0
    aggregates: int = 0
    seconds: float = 0.0


class PlacementFeed:

    def __init__(self, reader, client, ctxt, push_aggregates=True,
                 resend_interval=30.0, clock=time.monotonic,
                 read_concurrency=1, usage_sweep_interval=60.0,
                 hosts=None):
        if read_concurrency < 1:
            raise ValueError('read_concurrency must be 1 or more, got %r'
                             % read_concurrency)
        self.read_concurrency = read_concurrency
        self.reader = reader
        self.client = client
        self.ctxt = ctxt
        self.push_aggregates = push_aggregates
        self.resend_interval = resend_interval
        self.usage_sweep_interval = usage_sweep_interval
        self.hosts = hosts
        self.clock = clock
        self._read = {}        # provider uuid -> reader.Provider
        self._listed = {}      # provider uuid -> reader.Listed
        self._dirty = set()    # root uuids whose report must be redone
        self._sent = {}        # root uuid -> (name, stats, sent at)
        self._members = {}     # aggregate uuid -> frozenset of host names
        self._skipped = set()  # names already logged as not accepted
        self._aggregates_due = False
        self._usages_read = {}  # provider uuid -> when its usages were read
        self._not_serving = set()  # service hosts Nova says do not serve
        # Nova's services listing answered last cycle: only then is a 404
        # for a compute node Nova's word (not another service's)
        self._nova_answers = False
        self._last_cycle = None

    def run_cycle(self):
        started, requests = self.clock(), self.reader.requests
        cycle = Cycle()
        listing = {rp.uuid: rp for rp in self.reader.list_providers()}
        self._mark_moves(listing)
        self._listed = listing
        cycle.read = self._read_changed()
        cycle.swept = self._sweep_usages(started)
        self._read_services()
        self._last_cycle = started
        cycle.reported = self._report_dirty()
        cycle.reported += self._report_gone()
        cycle.resent = self._resend()
        self._aggregates_due |= bool(cycle.read or cycle.reported)
        if self.push_aggregates and self._aggregates_due:
            cycle.aggregates = self._push_aggregates()
        cycle.requests = self.reader.requests - requests
        cycle.seconds = self.clock() - started
        return cycle

    def _mark_moves(self, listing):
        """Dirty the trees a provider left since the last listing (the
        trees it joined are dirtied when it is read again)."""
        for uuid, old in self._listed.items():
            new = listing.get(uuid)
            if new is None:
                self._read.pop(uuid, None)
            if new is None or new.root_uuid != old.root_uuid:
                self._dirty.add(old.root_uuid)

    def _read_changed(self):
        due = []
        for listed in self._listed.values():
            known = self._read.get(listed.uuid)
            if known is None or known.listed != listed:
                due.append(listed)
        count = 0
        for listed, provider in self._reads(due):
            if provider is None:
                continue
            self._read[listed.uuid] = provider
            self._usages_read[listed.uuid] = self.clock()
            self._dirty.add(listed.root_uuid)
            count += 1
        return count

    def _sweep_usages(self, now):
        """Read again the usages of the providers read longest ago
        (module docstring, step 3); how many were read."""
        for uuid in set(self._usages_read) - set(self._read):
            del self._usages_read[uuid]
        due = sorted((at, uuid) for uuid, at in self._usages_read.items()
                     if at <= now - self.usage_sweep_interval)
        if self.usage_sweep_interval and self._last_cycle is not None:
            # this cycle's share of one sweep over every provider
            share = len(self._read) * (now - self._last_cycle) / \
                self.usage_sweep_interval
            due = due[:max(1, math.ceil(share))]
        for _, uuid in due:
            provider = self._read[uuid]
            try:
                usages = self.reader.read_usages(uuid)
            except reader_mod.ProviderGone:
                continue
            self._usages_read[uuid] = self.clock()
            if usages != provider.usages:
                self._read[uuid] = dataclasses.replace(provider,
                                                       usages=usages)
                self._dirty.add(provider.listed.root_uuid)
        return len(due)

    def _read_one(self, listed):
        """The provider's four reads; None if it went away."""
        try:
            return self.reader.read_provider(listed)
        except reader_mod.ProviderGone:
            LOG.debug('provider %s went away while read', listed.uuid)
            return None

    def _reads(self, due):
        """``(listed, provider or None)`` for each of ``due``, in order;
        stops at the first read that fails, raising its error."""
        if self.read_concurrency == 1 or len(due) < 2:
            for listed in due:
                yield listed, self._read_one(listed)
            return
        with concurrent.futures.ThreadPoolExecutor(
                self.read_concurrency,
                thread_name_prefix='placement-read') as pool:
            futures = [(listed, pool.submit(self._read_one, listed))
                       for listed in due]
            try:
                for listed, future in futures:
                    yield listed, future.result()
            finally:
                for _, future in futures:
                    future.cancel()

    def _trees(self, roots):
        """root uuid -> members (root first), for ``roots`` whose every
        listed member has been read."""
        trees = {root: [] for root in roots if getattr(
            self._listed.get(root), 'root_uuid', None) == root}
        for listed in self._listed.values():
            if listed.root_uuid in trees:
                trees[listed.root_uuid].append(listed.uuid)
        complete = {}
        for root, uuids in trees.items():
            if all(uuid in self._read for uuid in uuids):
                uuids.sort(key=lambda uuid: uuid != root)
                complete[root] = [self._read[uuid] for uuid in uuids]
        return complete

    def _report_dirty(self):
        count = 0
        for root, members in self._trees(self._dirty).items():
            skipped = set()
            name = self._name(members[0].listed)
            stats = tree.report(
                members, skipped,
                self.hosts.arch_of(root) if self.hosts else None)
            if _host(name) in self._not_serving or (
                    stats['kind'] == 'compute' and self._nova_answers
                    and self.hosts.unknown(root)):
                stats = dict(stats, disabled=True)
            self._log_skipped(members[0].listed.name, skipped)
            last = self._sent.get(root)
            if last is None or last[1] != stats or last[0] != name:
                count += self._send(root, name, stats)
            self._dirty.discard(root)   # only once sent: see _send
        return count

    def _read_services(self):
        """Dirty the trees whose host started or stopped serving."""
        if self.hosts is None:
            return
        serving = self.hosts.serving()
        self._nova_answers = serving is not None
        if serving is None:
            return
        roots = {uuid: self.hosts.host_of(uuid) for uuid, listed in
                 self._listed.items() if listed.root_uuid == uuid}
        not_serving = set(roots.values()) - serving - {None}
        changed = not_serving ^ self._not_serving
        self._not_serving = not_serving
        self._dirty.update(root for root, host in roots.items()
                           if host in changed)
        # a tree sent under its provider's name before Nova answered
        self._dirty.update(
            root for root, host in roots.items() if host is not None and
            root in self._sent and self._sent[root][0] != (
                host, self._listed[root].name))

    def _name(self, root):
        """The report's name of the tree of ``root`` (step 4)."""
        host = self.hosts.host_of(root.uuid) if self.hosts else None
        return root.name if host is None else (host, root.name)

    def _report_gone(self):
        count = 0
        for root in [root for root in self._sent if getattr(
                self._listed.get(root), 'root_uuid', None) != root]:
            name, stats, _ = self._sent.pop(root)
            count += self._send(None, name, dict(stats, disabled=True))
            self._dirty.discard(root)
        self._dirty &= set(self._listed)
        return count

    def _resend(self):
        due = self.clock() - self.resend_interval
        count = 0
        for root, (name, stats, sent_at) in list(self._sent.items()):
            if sent_at <= due:
                count += self._send(root, name, stats)
        return count

    def _send(self, root, name, stats):
        """Cast one report; remember it under ``root`` unless None. A
        refused report is skipped; a cast that fails raises (the tree
        stays dirty, the cycle ends)."""
        try:
            self.client.update_resource_stats(self.ctxt, name, stats)
        except exception.InvalidField as exc:
            LOG.warning('provider %s: report refused by the client: %s',
                        name, exc)
            return 0
        if root is not None:
            self._sent[root] = (name, stats, self.clock())
        return 1

    def _push_aggregates(self):
        members = {}
        for provider in self._read.values():
            sent = self._sent.get(provider.listed.root_uuid)
            for agg in provider.aggregates if sent else ():
                members.setdefault(agg, set()).add(_host(sent[0]))
        changed = [{'uuid': agg, 'name': agg, 'hosts': sorted(hosts),
                    'metadata': {}}
                   for agg, hosts in sorted(members.items())
                   if self._members.get(agg) != frozenset(hosts)]
        for start in range(0, len(changed), AGGREGATES_PER_CAST):
            self.client.update_aggregates(
                self.ctxt, changed[start:start + AGGREGATES_PER_CAST])
        gone = sorted(set(self._members) - set(members))
        for agg in gone:
            self.client.delete_aggregate(self.ctxt, agg)
        self._members = {agg: frozenset(hosts)
                         for agg, hosts in members.items()}
        self._aggregates_due = False
        return len(changed) + len(gone)

    def _log_skipped(self, name, skipped):
        new = skipped - self._skipped
        if new:
            LOG.warning('provider %s: left out names the scheduler does '
                        'not accept: %s', name, ', '.join(sorted(new)))
            self._skipped |= new


def _host(name):
    """The host of a report's name (``host`` or ``(host, node)``)."""
    return name if isinstance(name, str) else name[0]
