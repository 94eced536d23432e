"""The RPC endpoint: thin; it validates arguments and delegates.

``SchedulerManager`` is what each ``scheduler-server`` worker serves on the
``[scheduler] topic``. Calls answer with a result or an expected exception
(``NoValidHost``, ``InvalidRequest``); casts that carry bad input are
rejected with one warning in the log. No input can kill the worker.
"""

import oslo_messaging
from oslo_log import log as logging
from oslo_utils import uuidutils

from scheduler.db import claims
from scheduler import exception
from scheduler.model import names
from scheduler import objects
from scheduler.rpc import policy
from scheduler.model import resource_groups
from scheduler.rpc import validation
from scheduler.service import composition
from scheduler.objects import nova_compat
from scheduler.db import aggregates as db_aggregates
from scheduler.db import instances as db_instances
from scheduler.db import providers as db_providers
from scheduler.db import services as db_services

LOG = logging.getLogger(__name__)


def _check_uuid_list(value, field):
    if value is None:
        return None
    if not isinstance(value, (list, tuple)):
        raise exception.InvalidField(field=field,
                                     reason='expected a list of UUIDs')
    for index, item in enumerate(value):
        if not uuidutils.is_uuid_like(item):
            raise exception.InvalidField(
                field='%s[%d]' % (field, index),
                reason='not a UUID: %r' % (item,))
    return list(value)


class SchedulerManager:

    target = oslo_messaging.Target(version='1.3')

    def __init__(self, conf, db=None, parts=None):
        """``parts``: the worker's collaborators
        (``scheduler.service.composition``), built from ``conf`` (and
        ``db``) when not given. Tracker reports go through
        ``report_writer``: call its ``flush()`` to wait until they are
        written."""
        self.conf = conf
        parts = parts or composition.build(conf, db)
        self.db = parts.db
        self.ratio_defaults = parts.ratio_defaults
        self.recorder = parts.recorder
        self.report_writer = parts.report_writer
        self.host_cache = parts.host_cache
        self.notifier = parts.notifier
        self.driver = parts.driver
        self.claim_sweeper = parts.claim_sweeper

    def stop(self):
        """Write the reports and send the notifications still pending,
        stop polling and sweeping (clean shutdown)."""
        self.report_writer.stop()
        self.host_cache.stop()
        if self.claim_sweeper is not None:
            self.claim_sweeper.stop()
        self.notifier.stop()

    @policy.authorize('select_destinations')
    @oslo_messaging.expected_exceptions(exception.NoValidHost,
                                        exception.InvalidRequest)
    def select_destinations(self, ctxt, spec_obj=None, instance_uuids=None,
                            return_alternates=False):
        if spec_obj is None:
            raise exception.InvalidField(field='spec_obj', reason='missing')
        if nova_compat.is_nova_request_spec(spec_obj):
            # a caller speaking nova's RPC: its objects arrive as dicts
            spec_obj = objects.RequestSpec.from_nova(spec_obj)
        if not isinstance(spec_obj, objects.RequestSpec):
            raise exception.InvalidField(
                field='spec_obj', reason='expected a RequestSpec object, '
                'got %s' % type(spec_obj).__name__)
        if not spec_obj.obj_attr_is_set('flavor'):
            if not spec_obj.get('resource_groups'):
                raise exception.InvalidField(field='spec_obj.flavor',
                                             reason='missing')
            # resource groups alone (a volume, a port): no instance size
            spec_obj.flavor = objects.Flavor(vcpus=0, memory_mb=0)
        # callers may leave fields unset (num_instances, extra_specs ...)
        spec_obj.obj_complete('spec_obj')
        resource_groups.validate(spec_obj)
        uuids = _check_uuid_list(instance_uuids, 'instance_uuids')
        validation.check_request(spec_obj, uuids, self.conf.limits)
        if not isinstance(return_alternates, bool):
            raise exception.InvalidField(
                field='return_alternates', reason='expected a boolean')
        with self.notifier.deciding(ctxt, spec_obj, uuids) as decision:
            decision.selections = self.driver.select_destinations(
                ctxt, spec_obj, instance_uuids=uuids,
                return_alternates=return_alternates)
        if not spec_obj.resource_groups:
            # a caller of the previous release (it cannot send groups)
            # reads Selection 1.0 only; without groups nothing is lost
            for selection in (s for per in decision.selections for s in per):
                selection.wire_version = objects.Selection.LEGACY_VERSION
        return decision.selections

    @policy.authorize('update_resource_stats')
    def update_resource_stats(self, ctxt, name=None, stats=None):
        try:
            host, node = names.parse_name(name)
            validation.check_stats(stats, objects.ComputeNode)
            node_obj = objects.ComputeNode.from_stats(host, node, stats)
            validation.check_report(node_obj, self.conf.limits)
        except exception.InvalidRequest as exc:
            LOG.warning('Rejected update_resource_stats for %r: %s',
                        name, exc)
            return
        # returns once committed, so the report topic's server acknowledges
        # only stored reports; ReportNotStored has the broker redeliver it
        self.report_writer.submit(node_obj)

    @policy.authorize('delete_allocations')
    def delete_allocations(self, ctxt, consumer_uuid=None):
        if not uuidutils.is_uuid_like(consumer_uuid):
            LOG.warning('Rejected delete_allocations: consumer_uuid %r is '
                        'not a UUID', consumer_uuid)
            return
        released = claims.delete_allocations(self.db, consumer_uuid)
        LOG.debug('Released %d allocations of %s', released, consumer_uuid)

    @policy.authorize('sync_instance_info')
    def sync_instance_info(self, ctxt, host=None, instance_uuids=None):
        try:
            if not isinstance(host, str) or not host:
                raise exception.InvalidField(field='host',
                                             reason='expected a host name')
            uuids = _check_uuid_list(instance_uuids, 'instance_uuids')
            if uuids is None:
                raise exception.InvalidField(field='instance_uuids',
                                             reason='missing')
        except exception.InvalidRequest as exc:
            LOG.warning('Rejected sync_instance_info: %s', exc)
            return
        confirmed, released = claims.sync_host_consumers(
            self.db, host, uuids,
            self.conf.scheduler.unconfirmed_claim_grace_period)
        db_instances.prune_host(self.db, host, uuids,
                                validation.order_stamp(ctxt,
                                                       self.conf.limits))
        if released:
            LOG.info('Released %d stale allocation rows on %s', released,
                     host)

    @policy.authorize('update_aggregates')
    def update_aggregates(self, ctxt, aggregates=None):
        try:
            aggregates = _object_list(aggregates, objects.Aggregate,
                                      'aggregates')
            for index, agg in enumerate(aggregates):
                validation.check_aggregate(agg, 'aggregates[%d]' % index)
        except exception.InvalidRequest as exc:
            LOG.warning('Rejected update_aggregates: %s', exc)
            return
        db_aggregates.save_aggregates(
            self.db, aggregates,
            validation.order_stamp(ctxt, self.conf.limits))

    @policy.authorize('delete_aggregate')
    def delete_aggregate(self, ctxt, aggregate=None):
        # .get: an Aggregate without a uuid must not raise here
        uuid = (aggregate.get('uuid') if isinstance(aggregate,
                                                    objects.Aggregate)
                else aggregate)
        if not uuidutils.is_uuid_like(uuid):
            LOG.warning('Rejected delete_aggregate: %r is neither an '
                        'Aggregate nor its UUID', aggregate)
            return
        db_aggregates.delete_aggregate(
            self.db, uuid, validation.order_stamp(ctxt, self.conf.limits))

    @policy.authorize('update_instance_info')
    def update_instance_info(self, ctxt, host=None, instance_info=None):
        try:
            if not isinstance(host, str) or not host:
                raise exception.InvalidField(field='host',
                                             reason='expected a host name')
            infos = _object_list(instance_info, objects.InstanceInfo,
                                 'instance_info')
        except exception.InvalidRequest as exc:
            LOG.warning('Rejected update_instance_info: %s', exc)
            return
        db_instances.save_instances(
            self.db, host, infos,
            validation.order_stamp(ctxt, self.conf.limits))

    @policy.authorize('delete_instance_info')
    def delete_instance_info(self, ctxt, host=None, instance_uuid=None):
        if not isinstance(host, str) or not uuidutils.is_uuid_like(
                instance_uuid):
            LOG.warning('Rejected delete_instance_info for %r/%r', host,
                        instance_uuid)
            return
        db_instances.delete_instance(
            self.db, host, instance_uuid,
            validation.order_stamp(ctxt, self.conf.limits))

    @policy.authorize('get_service_versions')
    def get_service_versions(self, ctxt):
        """The live workers' records (host, pid, release, rpc_version,
        object_versions): what ``[upgrade_levels] scheduler = auto`` caps
        clients to. 1.3."""
        return [{k: s[k] for k in ('host', 'pid', 'worker', 'release',
                                   'rpc_version', 'object_versions')}
                for s in db_services.list_services(
                    self.db, self.conf.worker_down_time, live_only=True)]

    @policy.authorize('build_failed')
    def build_failed(self, ctxt, name=None):
        try:
            host, node = names.parse_name(name)
        except exception.InvalidRequest as exc:
            LOG.warning('Rejected build_failed: %s', exc)
            return
        node = None if isinstance(name, str) else node
        if not db_providers.record_build_failure(self.db, host, node):
            LOG.warning('build_failed for unknown host %r', name)


def _object_list(value, cls, field):
    """One object or a list of them, all of class ``cls`` and complete
    (a required field left unset, such as ``uuid``, is refused)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    for index, item in enumerate(items):
        if not isinstance(item, cls):
            raise exception.InvalidField(
                field='%s[%d]' % (field, index),
                reason='expected %s, got %s' % (cls.obj_name(),
                                                type(item).__name__))
        item.obj_complete('%s[%d]' % (field, index))
    return list(items)
