"""Claims written back to Placement: nova's endpoint, Placement in step.

With ``[nova] placement_write_back`` (the default when ``[nova]
enabled``), ``NovaEndpoint.select_destinations`` hands its plan to
``WriteBack.select``, which writes the allocation of each instance's
claimed host to Placement before the answer leaves, as nova-scheduler
does::

    write_back = WriteBack(AllocationWriter(adapter), release)
    selections = write_back.select(plan, spec, consumers, named, ctxt)

``plan(spec)`` is the scheduler's own decision and claim (the manager's
``select_destinations``); ``release(consumer)`` gives a claim back
(``scheduler.db.claims.delete_allocations``). For each instance nova
named (a consumer generated for a pin before 4.4 exists in the
scheduler only, and is released by its claim sweeper), ``AllocationWriter
.write`` sends ``PUT /allocations/{instance}`` at the microversion of
nova's allocation requests (``nova_wire.ALLOCATION_REQUEST_VERSION``,
1.28+: consumer generations): ``consumer_generation`` null for a new
consumer, with the request's ``project_id`` and ``user_id``. A consumer
that already holds allocations (an evacuation, a call repeated after its
worker died) is read and written again with its generation, its
allocations on other providers kept, as nova's ``claim_resources`` keeps
a move's source ("doubled-up") allocation.

Where the resources go: ``VCPU``, ``PCPU``, ``MEMORY_MB`` and
``DISK_GB`` on the selection's provider, the root of its tree (Nova 34's
compute node; the feed folds a tree into its root); any other class on
the provider of that tree that can take the amount (``GET
/resource_providers?in_tree=&resources=``), the root first.

The answer's allocation requests (``AnswerTargets``, one per request)
name, for each selection written back, the providers it was written on,
and for the alternates those Placement names when the answer is built
(``AllocationWriter.answer_targets``): nova's conductor maps a request's
groups to providers from the first, and claims an alternate with the
others.

Placement refusing a write (409: capacity moved underneath, or a
consumer changed concurrently) means the scheduler's view of a host was
behind Placement's: the allocations written for this request are
deleted, every claim of the request is released, the refused hosts are
added to the request's ``ignore_hosts`` and the request is planned
again, at most ``REPLANS`` times; then ``PlacementRefused``, which the
endpoint answers as ``NoValidHost`` (as it answers a new plan that finds
no host, with Placement's refusal in its reason). Any other failure of
Placement (unreachable, 5xx) also releases the claims and raises
``PlacementRefused`` without a new plan: the scheduler never answers
with a claim Placement does not hold.
"""

import typing

from keystoneauth1 import exceptions as ks_exc
from oslo_log import log as logging

from scheduler import exception
from scheduler.placement_feed import tree
from scheduler.nova import wire as nova_wire

LOG = logging.getLogger(__name__)

#: new plans after Placement refused a plan's allocations
REPLANS = 2
#: classes nova 34 keeps on the compute node's root provider
ROOT_CLASSES = tree.COMPUTE_CLASSES | {'DISK_GB'}
MICROVERSION = nova_wire.ALLOCATION_REQUEST_VERSION
_CONSUMER_CONFLICT = 'consumer generation conflict'


class PlacementRefused(Exception):
    """Placement did not take an allocation: ``conflict`` for a 409
    (re-plan), else Placement failed (no re-plan)."""

    def __init__(self, consumer, host, detail, conflict=True):
        super().__init__('Placement refused the allocation of %s on %s: '
                         '%s' % (consumer, host, detail))
        self.host = host
        self.conflict = conflict


class Written(typing.NamedTuple):
    """What ``AllocationWriter.write`` wrote for one consumer."""

    #: the consumer held no allocation before (an undo deletes it)
    new: bool
    #: provider uuid -> {"resources": ...}: where each class went
    allocations: dict


class AllocationWriter:
    """The allocations of instances in Placement, over a keystoneauth1
    ``Adapter`` (``placement_feed.reader.adapter_from_conf``)."""

    def __init__(self, http):
        self.http = http

    def _send(self, method, url, body=None):
        try:
            return getattr(self.http, method)(
                url, json=body, microversion=MICROVERSION, raise_exc=False)
        except ks_exc.ClientException as exc:
            raise PlacementRefused(url, '-', exc, conflict=False) from exc

    def write(self, consumer, selection, resources, project_id, user_id):
        """Write ``resources`` of ``consumer`` on the selection's tree;
        a ``Written`` (the consumer was new; the providers of each class)
        once Placement took them, ``PlacementRefused`` otherwise."""
        allocations = self.targets(selection, resources)
        body = {'allocations': allocations, 'project_id': project_id,
                'user_id': user_id, 'consumer_generation': None}
        answer = self._put(consumer, selection, body)
        if answer is None:
            return Written(True, allocations)
        held = self._get(consumer, selection)
        kept = {rp: {'resources': rp_alloc['resources']}
                for rp, rp_alloc in held['allocations'].items()
                if rp not in allocations}
        body.update(allocations=dict(kept, **allocations),
                    consumer_generation=held.get('consumer_generation'))
        answer = self._put(consumer, selection, body)
        if answer is not None:
            raise answer
        return Written(False, allocations)

    def _put(self, consumer, selection, body):
        """None once written; the refusal of a consumer that exists
        (to retry with its generation); raise any other refusal."""
        response = self._send('put', '/allocations/%s' % consumer, body)
        if response.status_code == 204:
            return None
        refused = PlacementRefused(consumer, selection.host, _detail(
            response), conflict=response.status_code == 409)
        if body['consumer_generation'] is None and \
                _CONSUMER_CONFLICT in str(refused):
            return refused
        raise refused

    def _get(self, consumer, selection):
        response = self._send('get', '/allocations/%s' % consumer)
        if response.status_code != 200:
            raise PlacementRefused(consumer, selection.host,
                                   _detail(response), conflict=False)
        return response.json()

    def targets(self, selection, resources):
        """provider uuid -> {"resources": ...} (module docstring)."""
        root = selection.compute_node_uuid
        targets = {}
        for rc, amount in sorted(resources.items()):
            if not amount:
                continue
            rp = root if rc in ROOT_CLASSES else self._holder(
                selection, rc, amount)
            targets.setdefault(rp, {'resources': {}})['resources'][rc] = \
                amount
        return targets

    def _holder(self, selection, rc, amount):
        """The provider of the tree that can take ``amount`` of ``rc``,
        the root first; the root when none can (Placement refuses)."""
        root = selection.compute_node_uuid
        response = self._send('get', '/resource_providers?in_tree=%s&'
                              'resources=%s:%d' % (root, rc, amount))
        if response.status_code != 200:
            raise PlacementRefused(root, selection.host,
                                   _detail(response), conflict=False)
        found = [rp['uuid'] for rp in response.json()['resource_providers']]
        return root if root in found or not found else found[0]

    def answer_targets(self, selection, resources):
        """``targets`` for the allocation request of an answer's
        selection (``nova_wire.answer``): nova's conductor claims an
        alternate host with it when the first host fails, so a class
        held by a child provider must name that provider. If Placement
        cannot say, the root (the conductor's claim on it fails and it
        moves on to the next alternate, as it would with no answer)."""
        try:
            return self.targets(selection, resources)
        except PlacementRefused as exc:
            LOG.warning('Allocation request of %s names its root '
                        'provider only: %s', selection.host, exc)
            return nova_wire.root_targets(selection, resources)

    def delete(self, consumer):
        """Delete the allocations of ``consumer`` (an undo); a failure
        is logged: nova's own cleanup or a later write settles it."""
        try:
            response = self._send('delete', '/allocations/%s' % consumer)
        except PlacementRefused as exc:
            LOG.warning('%s', exc)
            return
        if response.status_code not in (204, 404):
            LOG.warning('Could not delete the allocations of %s in '
                        'Placement: %s', consumer, _detail(response))


class AnswerTargets:
    """The ``targets`` of one answer's allocation requests
    (``nova_wire.answer``): a selection whose allocation the write-back
    wrote names the providers it was written on (``written``; nova's
    conductor maps the request's groups to providers from it), the
    others are asked of Placement (``AllocationWriter.answer_targets``).
    One per request: the same tree asked again after the write would
    answer from the capacity that write just took."""

    def __init__(self, writer):
        self.writer = writer
        self._written = {}

    def written(self, selection, allocations):
        # by identity: the answer is built from these very selections
        self._written[id(selection)] = (selection, allocations)

    def __call__(self, selection, resources):
        known = self._written.get(id(selection))
        if known is not None and known[0] is selection:
            return known[1]
        return self.writer.answer_targets(selection, resources)


def _detail(response):
    """Placement's error detail (its JSON errors, else the text)."""
    try:
        errors = response.json()['errors']
        return 'HTTP %s %s' % (response.status_code, '; '.join(
            '%s %s' % (e.get('code', ''), e.get('detail', ''))
            for e in errors))
    except (ValueError, KeyError, TypeError):
        return 'HTTP %s %s' % (response.status_code,
                               getattr(response, 'text', '')[:200])


class WriteBack:
    """Plan, claim, write to Placement; re-plan on refusal (module
    docstring)."""

    def __init__(self, writer, release, replans=REPLANS):
        self.writer = writer
        self.release = release
        self.replans = replans

    def select(self, plan, spec, consumers, named, ctxt, answer=None):
        """The selections of ``plan(spec)`` whose allocations Placement
        took, for ``consumers`` (those in ``named`` written); each
        allocation written is told to ``answer`` (an ``AnswerTargets``),
        if given."""
        refused = None
        for _attempt in range(self.replans + 1):
            try:
                selections = plan(spec)
            except exception.NoValidHost as exc:
                if refused is None:
                    raise
                raise nova_wire.NoValidHost('%s; before that, %s' % (
                    exc.reason, refused)) from None
            try:
                self._write_all(spec, consumers, named, ctxt, selections,
                                answer)
                return selections
            except PlacementRefused as exc:
                refused = exc
                for consumer in consumers:
                    self.release(consumer)
                LOG.info('%s; claims released%s', exc, ', planning again'
                         if exc.conflict else '')
                if not exc.conflict:
                    break
                spec.ignore_hosts = list(spec.get('ignore_hosts') or ()) + [
                    exc.host]
        raise refused

    def _write_all(self, spec, consumers, named, ctxt, selections, answer):
        """Write each named instance's allocation; on a refusal, delete
        those written as new consumers by this call, and raise."""
        project = spec.get('project_id') or ctxt.project_id
        user = spec.get('user_id') or ctxt.user_id
        written = []
        try:
            for consumer, per_instance in zip(consumers, selections):
                if consumer not in named:
                    continue
                first = per_instance[0]
                done = self.writer.write(consumer, first, dict(
                    first.get('allocation') or {}), project, user)
                if done.new:
                    written.append(consumer)
                if answer is not None:
                    answer.written(first, done.allocations)
        except PlacementRefused:
            for consumer in written:
                self.writer.delete(consumer)
            raise
