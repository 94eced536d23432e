"""Client side of the scheduler RPC API: the only code that sends RPC.

API version history:

* 1.0 - Initial version: ``select_destinations`` (call) and
  ``update_resource_stats`` (cast).
* 1.1 - Added ``delete_allocations`` and ``sync_instance_info`` (casts).
* 1.2 - Added ``update_aggregates``, ``delete_aggregate``,
  ``update_instance_info``, ``delete_instance_info`` and ``build_failed``
  (casts).

Never rename a method or change an argument's meaning; add a minor version
for every new method or argument, and keep the server accepting every
older 1.x version. Trackers' casts go to the report topic (see
``[scheduler] report_topic``), everything else to ``[scheduler] topic``;
servers serve every method on both. ``[upgrade_levels] scheduler`` caps
what is sent during rolling upgrades; methods newer than the cap raise
``InvalidRequest`` on the client instead of reaching an old server.
"""

import oslo_messaging

from scheduler import conf as sched_conf
from scheduler import exception
from scheduler import rpc

RPC_API_VERSION = '1.2'
# The worker serving a call sends a heartbeat every half of this; a caller
# whose worker died (SIGKILL, OOM) gets MessagingTimeout after it instead
# of after the whole rpc_response_timeout (60 s by default). Not shorter:
# heartbeats also stop while the broker is away, and a call must survive
# a broker restart of 10-15 s (measured: 10 s lost 4 of 145 such calls).
CALL_MONITOR_TIMEOUT = 30


class SchedulerAPI:

    #: release names that operators may use as [upgrade_levels] values
    VERSION_ALIASES = {}

    def __init__(self, conf, transport):
        cap = conf.upgrade_levels.scheduler
        self.version_cap = self.VERSION_ALIASES.get(cap, cap)
        target = oslo_messaging.Target(topic=conf.scheduler.topic,
                                       version='1.0')
        self.client = oslo_messaging.get_rpc_client(
            transport, target, version_cap=self.version_cap,
            serializer=rpc.get_serializer())
        self.report_topic = sched_conf.scheduler.report_topic(conf)

    def _prepare(self, version, method, topic=None):
        if not self.client.can_send_version(version):
            raise exception.InvalidRequest(
                reason='%s needs scheduler RPC API %s but [upgrade_levels] '
                'scheduler caps it at %s' % (method, version,
                                             self.version_cap))
        if topic:
            return self.client.prepare(version=version, topic=topic)
        return self.client.prepare(version=version)

    def select_destinations(self, ctxt, spec_obj, instance_uuids,
                            return_alternates=False):
        cctxt = self._prepare('1.0', 'select_destinations').prepare(
            call_monitor_timeout=CALL_MONITOR_TIMEOUT)
        return cctxt.call(ctxt, 'select_destinations', spec_obj=spec_obj,
                          instance_uuids=instance_uuids,
                          return_alternates=return_alternates)

    def update_resource_stats(self, ctxt, name, stats):
        cctxt = self._prepare('1.0', 'update_resource_stats',
                              topic=self.report_topic)
        cctxt.cast(ctxt, 'update_resource_stats', name=name, stats=stats)

    def delete_allocations(self, ctxt, consumer_uuid):
        cctxt = self._prepare('1.1', 'delete_allocations')
        cctxt.cast(ctxt, 'delete_allocations', consumer_uuid=consumer_uuid)

    def sync_instance_info(self, ctxt, host, instance_uuids):
        cctxt = self._prepare('1.1', 'sync_instance_info',
                              topic=self.report_topic)
        cctxt.cast(ctxt, 'sync_instance_info', host=host,
                   instance_uuids=instance_uuids)

    def update_aggregates(self, ctxt, aggregates):
        cctxt = self._prepare('1.2', 'update_aggregates')
        cctxt.cast(ctxt, 'update_aggregates', aggregates=aggregates)

    def delete_aggregate(self, ctxt, aggregate):
        cctxt = self._prepare('1.2', 'delete_aggregate')
        cctxt.cast(ctxt, 'delete_aggregate', aggregate=aggregate)

    def update_instance_info(self, ctxt, host, instance_info):
        cctxt = self._prepare('1.2', 'update_instance_info',
                              topic=self.report_topic)
        cctxt.cast(ctxt, 'update_instance_info', host=host,
                   instance_info=instance_info)

    def delete_instance_info(self, ctxt, host, instance_uuid):
        cctxt = self._prepare('1.2', 'delete_instance_info',
                              topic=self.report_topic)
        cctxt.cast(ctxt, 'delete_instance_info', host=host,
                   instance_uuid=instance_uuid)

    def build_failed(self, ctxt, name):
        cctxt = self._prepare('1.2', 'build_failed')
        cctxt.cast(ctxt, 'build_failed', name=name)
