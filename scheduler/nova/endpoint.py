"""Nova's scheduler RPC API (4.0-4.5), served by a worker beside its own.

With ``[nova] enabled``, ``servers(conf, transport, manager)`` returns one
more RPC server for a worker: on ``[nova] exchange`` and ``[nova] topic``
(fanout included, as oslo.messaging's RPC servers always listen), with
``NovaEndpoint`` behind ``NovaDispatcher``. Otherwise it returns ``[]``::

    extra = endpoint.servers(conf, transport, manager)
    for server in extra:
        server.start()

``NovaEndpoint`` is thin: each method reads nova's arguments
(``scheduler.nova.wire``), passes them through the same edge check a
message of the scheduler's own API gets (its JSON Schema and the plugins'
checks), calls the ``SchedulerManager`` method of the same name and
writes the answer nova's client expects. Every method is behind the
scheduler's policy rule of that name (``scheduler:select_destinations``
...), checked on nova's caller with ``[nova] granted_roles`` added.

With ``[nova] placement_write_back`` (the default), ``select_destinations``
also writes each instance's allocation to Placement before it answers,
and plans again if Placement refuses (``scheduler.nova.placement``);
the scheduler's own API never writes to Placement.

``NovaDispatcher`` is the worker's dispatcher (call-monitor heartbeats
from one thread, database errors as answers, refusals logged once) with
nova's messages read before the endpoint runs: their raw arguments
against the ``[limits]`` options, by name against what nova sends, and
nova's context through ``nova_wire.NovaSerializer``.
"""

import oslo_messaging
from oslo_log import log as logging
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_utils import uuidutils

from scheduler import conf as sched_conf
from scheduler.db import claims
from scheduler import exception
from scheduler.nova import placement as nova_placement
from scheduler.nova import wire as nova_wire
from scheduler.placement_feed import reader as placement_reader
from scheduler.edge import arguments
from scheduler.edge import dispatcher
from scheduler.edge import request as edge_request
from scheduler.rpc import late_ack
from scheduler.rpc import messaging
from scheduler.edge import policy
from scheduler.edge import validation
from scheduler.edge import walk
from scheduler import version

LOG = logging.getLogger(__name__)

#: the newest version of nova's scheduler RPC API (nova 34)
NOVA_RPC_VERSION = '4.5'


class NovaEndpoint:
    """Nova's ``SchedulerManager`` RPC methods over a ``SchedulerManager``
    of this scheduler (module docstring)."""

    target = oslo_messaging.Target(version=NOVA_RPC_VERSION)

    def __init__(self, conf, manager, edge, placement=None):
        """``placement``: an ``nova_placement.AllocationWriter`` to
        write the claims back to Placement, or None."""
        self.conf = conf
        #: what ``@policy.authorize`` checks nova's callers against
        self.policy = policy.EndpointPolicy(conf)
        self.manager = manager
        self.edge = edge
        self.cell_uuid = conf.nova.cell_uuid
        self.write_back = None if placement is None else \
            nova_placement.WriteBack(placement, self._release)

    def _answer_targets(self):
        """The allocation requests' ``targets`` of one answer: classes
        held by a child provider named where Placement puts them (where
        the write-back put them, for a primary selection)."""
        if self.write_back is None:
            return nova_wire.root_targets
        return nova_placement.AnswerTargets(self.write_back.writer)

    def _delegate(self, method, ctxt, call=None, **args):
        """The manager's ``method``, after the edge check of its
        arguments as the scheduler's own API gets it (policy was
        evaluated by this endpoint's own ``authorize``); ``call``: the
        server's record of the RPC call (``scheduler.model.call.Call``)."""
        return self.manager.serve(self._checked(method, ctxt, args, call))

    def _checked(self, method, ctxt, args, call=None):
        """The ``EdgeRequest`` of the scheduler's own ``method`` with
        ``args``: read, and through the edge check that API gets."""
        args = arguments.read(method, args)
        self.edge.check_arguments(method, version.RPC_API_VERSION, args)
        # the plugins' own checks, as the worker's dispatcher runs them
        checked = dispatcher._plugin_checks(self.manager, method, args)
        return edge_request.EdgeRequest(method, ctxt, args, checked, call)

    @policy.authorize('select_destinations')
    @oslo_messaging.expected_exceptions(nova_wire.NoValidHost,
                                        exception.InvalidRequest)
    def select_destinations(self, ctxt, request_spec=None,
                            filter_properties=None, spec_obj=None,
                            instance_uuids=None, return_objects=False,
                            return_alternates=False, *, call=None):
        """Nova's ``select_destinations`` (4.0-4.5); ``call``: the
        server's record of the RPC call (``scheduler.model.call.Call``,
        given by ``NovaDispatcher``, not by nova), or None."""
        try:
            return self._select(ctxt, request_spec, filter_properties,
                                spec_obj, instance_uuids, return_objects,
                                return_alternates, call)
        except exception.NoValidHost as exc:
            # nova shows the reason to the instance's owner (the fault):
            # nova-scheduler's words, the diagnosis (host names) logged
            LOG.info('NoValidHost answered to nova (request %s): %s',
                     getattr(ctxt, 'request_id', None), exc.reason)
            raise nova_wire.NoValidHost(nova_wire.NO_VALID_HOST_REASON) \
                from None

    def _select(self, ctxt, request_spec, filter_properties, spec_obj,
                instance_uuids, return_objects, return_alternates, call):
        spec = nova_wire.request_spec(spec_obj, request_spec,
                                      filter_properties, self.cell_uuid)
        uuids = nova_wire.consumers(spec, instance_uuids,
                                    uuidutils.generate_uuid)
        targets = self._answer_targets()
        if nova_wire.is_rebuild_check(spec):
            # the instance stays and keeps its allocations: nothing is
            # claimed or written to Placement (as nova-scheduler)
            args = self._checked('select_destinations', ctxt,
                                 {'spec_obj': spec,
                                  'instance_uuids': uuids}).args
            # (its NoValidHost is answered in nova's words above; not a
            # method of the scheduler's own API, hence not the manager's)
            selections = self.manager.driver.check_destination(
                ctxt, args['spec_obj'], args['instance_uuids'])
            return nova_wire.answer(selections, return_objects,
                                    self.cell_uuid, self._zone_of, targets)

        def plan(spec):
            return self._plan(ctxt, spec, uuids, bool(
                # as nova: alternates only to a caller that reads objects
                return_objects and return_alternates), call)

        if self.write_back is None:
            selections = plan(spec)
        else:
            try:
                selections = self.write_back.select(
                    plan, spec, uuids,
                    nova_wire.named_consumers(spec, instance_uuids), ctxt,
                    targets)
            except nova_placement.PlacementRefused as exc:
                raise nova_wire.NoValidHost(str(exc)) from None
        return nova_wire.answer(selections, return_objects, self.cell_uuid,
                                self._zone_of, targets)

    def _plan(self, ctxt, spec, uuids, return_alternates, call):
        """The manager's selections (claimed), NoValidHost in nova's
        name."""
        try:
            return self._delegate(
                'select_destinations', ctxt, call, spec_obj=spec,
                instance_uuids=uuids, return_alternates=return_alternates)
        except rpc_dispatcher.ExpectedException as wrapped:
            # the manager's answer; NoValidHost in nova's name
            error = wrapped.exc_info[1]
            if not isinstance(error, exception.NoValidHost):
                raise
            raise nova_wire.NoValidHost(error.reason) from None

    def _release(self, consumer):
        """Give back the scheduler's claims of ``consumer`` (a plan
        Placement refused)."""
        claims.delete_allocations(self.manager.db, consumer)

    def _zone_of(self, selection):
        """The availability zone of the selection's host, as the
        worker's host table has it (aggregates, report, default)."""
        cache = self.manager.host_cache
        with cache.lock:
            table = cache.table
            for row in table.rows_of_host(selection.host):
                if table.uuids[row] == selection.compute_node_uuid:
                    return table.az_names[table.az[row]]
        return self.conf.scheduler.default_availability_zone

    @policy.authorize('update_aggregates')
    def update_aggregates(self, ctxt, aggregates=None):
        self._delegate('update_aggregates', ctxt,
                       aggregates=nova_wire.aggregates(aggregates))

    @policy.authorize('delete_aggregate')
    def delete_aggregate(self, ctxt, aggregate=None):
        self._delegate('delete_aggregate', ctxt,
                       aggregate=nova_wire.aggregate_uuid(aggregate))

    @policy.authorize('update_instance_info')
    def update_instance_info(self, ctxt, host_name=None, instance_info=None):
        self._delegate('update_instance_info', ctxt, host=host_name,
                       instance_info=nova_wire.instance_infos(
                           host_name, instance_info))

    @policy.authorize('delete_instance_info')
    def delete_instance_info(self, ctxt, host_name=None, instance_uuid=None):
        self._delegate('delete_instance_info', ctxt, host=host_name,
                       instance_uuid=instance_uuid)

    @policy.authorize('sync_instance_info')
    def sync_instance_info(self, ctxt, host_name=None, instance_uuids=None):
        self._delegate('sync_instance_info', ctxt, host=host_name,
                       instance_uuids=instance_uuids)


class NovaDispatcher(dispatcher.SchedulerDispatcher):
    """The worker's dispatcher for nova's messages (module docstring)."""

    def _checked_call(self, endpoint, method, ctxt, args, envelope):
        nova_wire.check_arguments(method, args)
        for name, value in args.items():
            walk.check_structure(value, name, self.limits)
        ctxt = self.serializer.deserialize_context(ctxt)
        args = self._entities(ctxt, args)
        if method == 'select_destinations':
            # the one method that claims: its deadline, its claims
            args['call'] = envelope.call
        return self._serialized(ctxt, getattr(endpoint, method)(ctxt,
                                                                **args))

    def _version(self):
        return NOVA_RPC_VERSION


def check_options(conf):
    """Raise ``ConfigInvalid`` if ``[nova]`` cannot be served."""
    if not uuidutils.is_uuid_like(conf.nova.cell_uuid):
        raise exception.ConfigInvalid(
            reason='[nova] cell_uuid must be the UUID of the Nova cell of '
            'the hosts ("nova-manage cell_v2 list_cells") when [nova] '
            'enabled is true, got %r' % (conf.nova.cell_uuid,))
    own = (conf.scheduler.topic, sched_conf.scheduler.report_topic(conf))
    if conf.nova.topic in own:
        raise exception.ConfigInvalid(
            reason='[nova] topic %r is also this scheduler\'s own topic '
            '([scheduler] topic %r, reports on %r): RabbitMQ names a '
            'topic\'s queue and fanout exchange after the topic alone, '
            'whatever the exchange, so nova\'s calls and the scheduler\'s '
            'own would share one queue. Set [scheduler] topic to another '
            'name (e.g. scheduler_v1) here and in every client of the '
            'scheduler\'s own API (trackers, scheduler-placement-feed)'
            % ((conf.nova.topic,) + own))
    if conf.nova.placement_write_back and not conf.placement_feed.auth_type:
        raise exception.ConfigInvalid(
            reason='[nova] placement_write_back needs Placement\'s '
            'keystoneauth1 options in [placement_feed] (auth_type ...), '
            'or set it to false')


def placement_writer(conf):
    """The writer of the claims to Placement, None without write-back
    (``[nova] placement_write_back``)."""
    if not conf.nova.placement_write_back:
        return None
    return nova_placement.AllocationWriter(
        placement_reader.adapter_from_conf(conf))


def servers(conf, transport, manager, release_claims=None):
    """The extra RPC servers of a worker that serves decisions: one on
    nova's exchange and topic when ``[nova] enabled``, else none.

    It acknowledges a call only once it answered, as the decision topic's
    server does (``scheduler.rpc.late_ack.CallServer``): a call a worker
    took and did not answer (SIGKILL, OOM) goes to another worker, whose
    reply reaches nova's conductor while it still waits; the repeat finds
    the claims (and Placement allocations) the dead worker wrote for the
    same instances. ``release_claims`` gives back the claims of a call
    answered after nova stopped waiting."""
    sched_conf.nova.register_opts(conf)
    if not conf.nova.enabled:
        return []
    sched_conf.placement_feed.register_opts(conf)
    check_options(conf)
    sched_conf.limits.register_opts(conf)
    endpoint = NovaEndpoint(conf, manager,
                            validation.EdgeCheck(conf.limits),
                            placement_writer(conf))
    target = oslo_messaging.Target(exchange=conf.nova.exchange,
                                   topic=conf.nova.topic, server=conf.host)
    worker_dispatcher = NovaDispatcher(
        [endpoint], nova_wire.NovaSerializer(conf.nova.granted_roles),
        conf.limits, conf.host)
    LOG.info('Serving nova\'s scheduler RPC API %s on exchange %s, topic '
             '%s', NOVA_RPC_VERSION, conf.nova.exchange, conf.nova.topic)
    return [messaging.server(conf, transport, target, worker_dispatcher,
                             late_ack.CallServer,
                             release_claims=release_claims)]
