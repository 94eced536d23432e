"""SchedulerClient: select_destinations and the tracker-side casts.

Input is validated before it is sent, so a tracker learns about a bad
field from a ``ValueError`` (``scheduler.exception.InvalidField``) at the
call, not from a line in the scheduler's log. A message larger than
``[limits] max_message_bytes`` is refused the same way, with
``scheduler.exception.MessageTooLarge`` (an ``InvalidField`` naming the
method and argument, the size and the limit), before it reaches the broker.

What ``select_destinations`` raises, all ``scheduler.exception`` classes:

* ``NoValidHost``: nothing fits; ``reason`` says which filter removed what.
* ``InvalidRequest`` / ``InvalidField``: the request cannot be accepted.
* ``Forbidden``: the context does not pass the method's policy rule.
* ``DatabaseUnavailable``: the scheduler's database is unreachable; retry.
* ``SchedulerUnavailable``: no worker answered in time (a worker died
  mid-call, none is serving, or the broker is away): oslo.messaging's
  ``MessagingTimeout`` translated, and still a subclass of it. The message
  says how long the call waited; a claim the dead worker may have written
  is released after ``[scheduler] unconfirmed_claim_grace_period``, so the
  caller simply retries.
"""

import time

import oslo_messaging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from scheduler import conf as sched_conf
from scheduler import exception
from scheduler.model import names
from scheduler import objects
from scheduler.model import resource_groups
from scheduler.objects import nova_compat
from scheduler.rpc import messaging
from scheduler.client import rpcapi


class SchedulerClient:

    def __init__(self, conf, transport=None):
        sched_conf.register_all(conf)
        self.conf = conf
        self._owns_transport = transport is None
        self.transport = transport or messaging.get_transport(conf)
        self.api = rpcapi.SchedulerAPI(conf, self.transport)

    def select_destinations(self, ctxt, spec, filter_properties=None,
                            instance_uuids=None, return_alternates=False):
        """Claim a destination per instance.

        ``spec`` is a ``RequestSpec``, nova's RequestSpec primitive, or the
        legacy ``request_spec`` dict (then ``filter_properties`` is the
        legacy dict that goes with it).
        Returns one list of ``Selection`` per instance: the claimed host
        first, then up to ``max_attempts - 1`` alternates if asked for.
        Raises ``scheduler.exception.NoValidHost`` when nothing fits,
        ``SchedulerUnavailable`` when no worker answered in time (module
        docstring).
        """
        if nova_compat.is_nova_request_spec(spec) and not \
                filter_properties:
            spec = objects.RequestSpec.from_nova(spec, 'spec')
        elif isinstance(spec, dict):
            spec = objects.RequestSpec.from_primitives(spec,
                                                       filter_properties)
        elif not isinstance(spec, objects.RequestSpec):
            raise exception.InvalidField(
                field='spec', reason='expected a RequestSpec or a legacy '
                'request_spec dict, got %s' % type(spec).__name__)
        elif filter_properties:
            raise exception.InvalidField(
                field='filter_properties',
                reason='only allowed with a legacy request_spec dict')
        resource_groups.validate(spec, 'spec')
        if instance_uuids is not None:
            instance_uuids = list(instance_uuids)
        started = time.monotonic()
        try:
            return self.api.select_destinations(ctxt, spec, instance_uuids,
                                                return_alternates)
        except exception.SchedulerException as exc:
            # oslo.messaging appends the server's traceback to remote
            # exceptions; give callers the plain, local class instead.
            raise _local_copy(exc) from None
        except oslo_messaging.MessagingTimeout:
            raise exception.SchedulerUnavailable(
                service='scheduler', method='select_destinations',
                seconds=time.monotonic() - started,
                grace=self.conf.scheduler.unconfirmed_claim_grace_period,
            ) from None

    def update_resource_stats(self, ctxt, name, stats):
        """Report what a host (or ``(host, node)``) has; fire and forget.

        ``stats`` is a dict of compute_nodes fields or a ``ComputeNode``.
        The report is stamped with ``updated_at`` (now) unless it has one;
        the scheduler ignores reports older than the one it holds.
        """
        host, node = names.parse_name(name)
        node_obj = objects.ComputeNode.from_stats(host, node, stats)
        if node_obj.updated_at is None:
            node_obj.updated_at = timeutils.utcnow(with_timezone=True)
        wire_name = host if isinstance(name, str) else [host, node]
        self.api.update_resource_stats(ctxt, wire_name, node_obj)

    def delete_allocations(self, ctxt, consumer_uuid):
        """Release the claims of an instance (deleted, or build failed)."""
        self.api.delete_allocations(ctxt, consumer_uuid)

    def sync_instance_info(self, ctxt, host, instance_uuids):
        """Tell the scheduler which instances ``host`` really runs."""
        self.api.sync_instance_info(ctxt, host, list(instance_uuids))

    def update_aggregates(self, ctxt, aggregates):
        """Create or replace aggregates (``Aggregate`` objects or dicts
        with uuid, name, hosts, metadata)."""
        self.api.update_aggregates(ctxt, [
            _as_object(objects.Aggregate, a, 'aggregates[%d]' % i)
            for i, a in enumerate(aggregates)])

    def delete_aggregate(self, ctxt, aggregate):
        """Forget an aggregate (an ``Aggregate`` or its UUID)."""
        if isinstance(aggregate, objects.Aggregate):
            aggregate = aggregate.get('uuid')
        _check_uuid(aggregate, 'aggregate')
        self.api.delete_aggregate(ctxt, aggregate)

    def update_instance_info(self, ctxt, host, instance_info):
        """What ``host`` runs: ``InstanceInfo`` objects or dicts, one or
        a list."""
        items = (instance_info if isinstance(instance_info, (list, tuple))
                 else [instance_info])
        self.api.update_instance_info(ctxt, host, [
            _as_object(objects.InstanceInfo, info, 'instance_info[%d]' % i)
            for i, info in enumerate(items)])

    def delete_instance_info(self, ctxt, host, instance_uuid):
        """``host`` no longer runs ``instance_uuid``."""
        if not isinstance(host, str) or not host:
            raise exception.InvalidField(field='host',
                                         reason='expected a host name')
        _check_uuid(instance_uuid, 'instance_uuid')
        self.api.delete_instance_info(ctxt, host, instance_uuid)

    def build_failed(self, ctxt, name):
        """A build failed on ``name`` (host or ``(host, node)``);
        BuildFailureWeigher steers requests away until the host's tracker
        reports ``failed_builds: 0`` in its stats."""
        host, node = names.parse_name(name)
        self.api.build_failed(ctxt, host if isinstance(name, str)
                              else [host, node])

    def close(self):
        if self._owns_transport:
            self.transport.cleanup()


def _local_copy(remote):
    """The scheduler.exception class ``remote`` was rebuilt from."""
    for cls in type(remote).__mro__:
        if cls.__module__ == exception.__name__:
            return cls(**remote.kwargs)
    return remote


def _check_uuid(value, field):
    if not uuidutils.is_uuid_like(value):
        raise exception.InvalidField(field=field,
                                     reason='not a UUID: %r' % (value,))


def _as_object(cls, value, path):
    """``value`` (an object or a dict) as a complete ``cls``: the server
    would only log a warning about a missing required field."""
    if isinstance(value, cls):
        return value.obj_complete(path)
    if not isinstance(value, dict):
        raise exception.InvalidField(
            field=path, reason='expected a dict or %s' % cls.obj_name())
    obj = cls()
    values = dict(value)
    if cls is objects.InstanceInfo and isinstance(values.get('flavor'),
                                                  dict):
        values['flavor'] = objects.Flavor().obj_set_from_dict(
            values['flavor'], path + '.flavor')
    return obj.obj_set_from_dict(values, path).obj_complete(path)
