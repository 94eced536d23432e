"""The RPC endpoint: thin; it reads its arguments and delegates.

``SchedulerManager`` is what each ``scheduler-server`` worker serves on the
``[scheduler] topic``. Only its RPC methods, those of
``scheduler.edge.schemas.METHODS``, each behind its policy rule
(``@policy.authorize``), can be called: the dispatcher's access policy
answers any other name (``conf``, ``stop``, ``target`` ...) as an
unknown method. Its methods check nothing: every message was
checked once, before they run, by the RPC edge (``scheduler.rpc``: the
dispatcher, ``validation`` and one JSON Schema per method and version in
``scheduler.edge.schemas``), which answers a call with ``InvalidRequest``
and drops a cast with one warning. A method reads its arguments into
objects (``scheduler.edge.arguments``: a no-op for what the edge already
read; in-process callers such as the simulator pass raw values), calls
the driver or the database, and returns. Calls answer with a result or an
expected exception (``NoValidHost``, ``InvalidRequest``).
"""

import oslo_messaging
from oslo_log import log as logging

from scheduler.db import claims
from scheduler import exception
from scheduler.model import names
from scheduler import objects
from scheduler.edge import arguments
from scheduler.edge import policy
from scheduler.edge import validation
from scheduler import version
from scheduler.db import aggregates as db_aggregates
from scheduler.db import instances as db_instances
from scheduler.db import providers as db_providers
from scheduler.db import send_order
from scheduler.db import services as db_services

LOG = logging.getLogger(__name__)


class SchedulerManager:

    target = oslo_messaging.Target(version=version.RPC_API_VERSION)

    def __init__(self, conf, parts):
        """``parts``: the worker's collaborators, built by the composition
        root (``scheduler.service.composition.build``; ``build_manager``
        builds both). Tracker reports go through ``report_writer``: call
        its ``flush()`` to wait until they are written."""
        self.conf = conf
        #: what ``@policy.authorize`` checks callers against
        self.policy = policy.EndpointPolicy(conf)
        self.db = parts.db
        self.ratio_defaults = parts.ratio_defaults
        self.recorder = parts.recorder
        self.report_writer = parts.report_writer
        self.host_cache = parts.host_cache
        self.notifier = parts.notifier
        self.driver = parts.driver
        self.claim_sweeper = parts.claim_sweeper
        #: run by the RPC edge on every request, before the driver
        self.request_checks = parts.request_checks

    def stop(self):
        """Write the reports and send the notifications still pending,
        stop polling and sweeping (clean shutdown)."""
        self.report_writer.stop()
        self.host_cache.stop()
        if self.claim_sweeper is not None:
            self.claim_sweeper.stop()
        self.notifier.stop()

    def serve(self, request):
        """A message the RPC edge read, checked and authorized
        (``scheduler.edge.request.EdgeRequest``): its arguments are
        not read again, and a placement is planned with what the
        plugins' checks derived."""
        if request.method == 'select_destinations':
            return self._place(request.context, checked=request.checked,
                               call=request.call, **request.args)
        if request.method == 'update_resource_stats':
            return self._store_report(request.args['stats'])
        return policy.unchecked(self, request.method)(request.context,
                                                      **request.args)

    @policy.authorize('select_destinations')
    @oslo_messaging.expected_exceptions(exception.NoValidHost,
                                        exception.InvalidRequest)
    def select_destinations(self, ctxt, spec_obj=None, instance_uuids=None,
                            return_alternates=False):
        return self._place(ctxt, arguments.request_spec(spec_obj),
                           instance_uuids, return_alternates)

    @oslo_messaging.expected_exceptions(exception.NoValidHost,
                                        exception.InvalidRequest,
                                        exception.CallerGaveUp)
    def _place(self, ctxt, spec_obj, instance_uuids=None,
               return_alternates=False, checked=None, call=None):
        uuids = None if instance_uuids is None else list(instance_uuids)
        extra = {name: value for name, value in (
            ('checked', checked), ('call', call))
            if value is not None}
        with self.notifier.deciding(ctxt, spec_obj, uuids) as decision:
            decision.selections = self.driver.select_destinations(
                ctxt, spec_obj, instance_uuids=uuids,
                return_alternates=return_alternates, **extra)
        if not spec_obj.resource_groups:
            # a caller of the previous release (it cannot send groups)
            # reads Selection 1.0 only; without groups nothing is lost
            for selection in (s for per in decision.selections for s in per):
                selection.wire_version = objects.Selection.LEGACY_VERSION
        return decision.selections

    @policy.authorize('update_resource_stats')
    def update_resource_stats(self, ctxt, name=None, stats=None):
        self._store_report(arguments.report(name, stats))

    def _store_report(self, node):
        # returns once committed, so the report topic's server acknowledges
        # only stored reports; ReportNotStored has the broker redeliver it
        self.report_writer.submit(node)

    @policy.authorize('delete_allocations')
    def delete_allocations(self, ctxt, consumer_uuid=None):
        released = claims.delete_allocations(self.db, consumer_uuid)
        LOG.debug('Released %d allocations of %s', released, consumer_uuid)

    @policy.authorize('sync_instance_info')
    def sync_instance_info(self, ctxt, host=None, instance_uuids=None):
        uuids = list(instance_uuids)
        confirmed, released = claims.sync_host_consumers(
            self.db, host, uuids,
            self.conf.scheduler.unconfirmed_claim_grace_period)
        db_instances.prune_host(self.db, host, uuids,
                                validation.order_stamp(ctxt))
        if released:
            LOG.info('Released %d stale allocation rows on %s', released,
                     host)

    @policy.authorize('update_aggregates')
    def update_aggregates(self, ctxt, aggregates=None):
        db_aggregates.save_aggregates(
            self.db, arguments.object_list(aggregates, objects.Aggregate,
                                           'aggregates'),
            validation.order_stamp(ctxt))

    @policy.authorize('delete_aggregate')
    def delete_aggregate(self, ctxt, aggregate=None):
        uuid = (aggregate.uuid if isinstance(aggregate, objects.Aggregate)
                else aggregate)
        db_aggregates.delete_aggregate(
            self.db, uuid, validation.order_stamp(ctxt))

    @policy.authorize('update_instance_info')
    def update_instance_info(self, ctxt, host=None, instance_info=None):
        infos = arguments.object_list(instance_info, objects.InstanceInfo,
                                      'instance_info')
        db_instances.save_instances(self.db, host, infos,
                                    validation.order_stamp(ctxt))
        # the tracker runs them: their claims there are confirmed
        claims.confirm_host_consumers(self.db, host,
                                      [info.uuid for info in infos])

    @policy.authorize('delete_instance_info')
    def delete_instance_info(self, ctxt, host=None, instance_uuid=None):
        stamp = validation.order_stamp(ctxt)
        db_instances.delete_instance(self.db, host, instance_uuid, stamp)
        # the instance left the host: its claims there written before
        # this message are given back
        released = claims.release_host_consumer(
            self.db, host, instance_uuid, send_order.clamp(stamp))
        if released:
            LOG.info('Released %d allocation rows of %s on %s (the '
                     'tracker says it left)', released, instance_uuid, host)

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
        host, node = names.parse_name(name)
        node = None if isinstance(name, str) else node
        if not db_providers.record_build_failure(self.db, host, node):
            LOG.warning('build_failed for unknown host %r', name)
