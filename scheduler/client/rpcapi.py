"""Client side of the scheduler RPC API: the only code that sends RPC.

API version history:

* 1.0 - Initial version: ``select_destinations`` (call) and
  ``update_resource_stats`` (cast).
* 1.1 - Added ``delete_allocations`` and ``sync_instance_info`` (casts).
* 1.2 - Added ``update_aggregates``, ``delete_aggregate``,
  ``update_instance_info``, ``delete_instance_info`` and ``build_failed``
  (casts).
* 1.3 - Added ``get_service_versions`` (call): the releases, RPC and object
  versions of the live workers, for ``[upgrade_levels] scheduler = auto``.

Never rename a method or change an argument's meaning; add a minor version
for every new method or argument, and keep the server accepting every
older 1.x version. Trackers' casts go to the report topic (see
``[scheduler] report_topic``), everything else to ``[scheduler] topic``;
servers serve every method on both.

Rolling upgrades: ``[upgrade_levels] scheduler`` caps what is sent. It is
a version (``1.2``), a release named in ``VERSION_ALIASES`` (``0.1``), or
``auto``: the lowest RPC version any live worker reports, asked over RPC
(``get_service_versions``) and cached for ``[upgrade_levels]
auto_cache_seconds``; a worker too old to answer counts as the oldest
supported release. Methods newer than the cap raise ``InvalidRequest`` on
the client instead of reaching an old server, and objects are sent at the
versions listed in ``OBJECT_VERSIONS`` for the cap (``obj_make_compatible``
backports them). Replies are not backported: a reply object that gains a
field needs a new argument by which the caller says it understands it.
"""

import threading
import time

import oslo_messaging
from oslo_log import log as logging
from oslo_utils import versionutils
from oslo_versionedobjects import base as ovo_base

from scheduler import conf as sched_conf
from scheduler import context as sched_context
from scheduler import exception
from scheduler.client import message_size
from scheduler import objects
from scheduler import version

LOG = logging.getLogger(__name__)

RPC_API_VERSION = version.RPC_API_VERSION
AUTO = 'auto'
# The worker serving a call sends a heartbeat every half of this; a caller
# whose worker died (SIGKILL, OOM) gets MessagingTimeout after it instead
# of after the whole rpc_response_timeout (60 s by default). Not shorter:
# heartbeats also stop while the broker is away, and a call must survive
# a broker restart of 10-15 s (measured: 10 s lost 4 of 145 such calls).
CALL_MONITOR_TIMEOUT = 30

#: release -> the RPC version its workers serve; ``[upgrade_levels]
#: scheduler`` may name a release instead of a version
VERSION_ALIASES = {
    '0.1': '1.2',
}

#: what ``auto`` assumes when a worker cannot say (a release older than
#: get_service_versions): the oldest release still supported
OLDEST_SUPPORTED = '0.1'

#: RPC version -> object versions its servers understand. A capped client
#: sends each object at the version listed for the highest entry not above
#: the cap; uncapped, objects go at their current version.
OBJECT_VERSIONS = {
    '1.2': {'Aggregate': '1.0', 'ComputeNode': '1.0', 'Destination': '1.0',
            'Flavor': '1.0', 'ImageMeta': '1.0', 'InstanceGroup': '1.0',
            'InstanceInfo': '1.0', 'RequestSpec': '1.0',
            'SchedulerRetries': '1.0', 'Selection': '1.0'},
    '1.3': {'Aggregate': '1.0', 'ComputeNode': '1.1', 'Destination': '1.0',
            'Flavor': '1.0', 'ImageMeta': '1.0', 'InstanceGroup': '1.0',
            'InstanceInfo': '1.0', 'LocalityRule': '1.0',
            'RequestSpec': '1.2', 'ResourceGroup': '1.0',
            'SchedulerRetries': '1.0', 'Selection': '1.1'},
}


def resolve_alias(value):
    """A configured cap (version, release or None) -> a version or None."""
    if not value:
        return None
    return VERSION_ALIASES.get(value, value)


def object_manifest(cap):
    """Object versions to send when the RPC version is capped at ``cap``."""
    if cap is None:
        return None
    known = [v for v in OBJECT_VERSIONS
             if versionutils.convert_version_to_tuple(v) <=
             versionutils.convert_version_to_tuple(cap)]
    if not known:
        return None
    return OBJECT_VERSIONS[max(known,
                               key=versionutils.convert_version_to_tuple)]


def lowest_version(versions):
    """The lowest of RPC version strings (None for an empty list)."""
    versions = [v for v in versions if v]
    if not versions:
        return None
    return min(versions, key=versionutils.convert_version_to_tuple)


# answers that say nothing about the worker's release
_NOT_AN_OLD_WORKER = tuple(
    getattr(exception, name) for name in ('Forbidden',)
    if hasattr(exception, name))


class _Serialized:
    """An argument ``SchedulerAPI`` already serialized (to measure it);
    the serializer passes its value through as it is."""

    __slots__ = ('value',)

    def __init__(self, value):
        self.value = value


class _ManifestSerializer(objects.SchedulerObjectSerializer):
    """Sends objects at the versions of ``manifest`` (None: current)."""

    manifest = None

    def serialize_entity(self, ctxt, entity):
        if type(entity) is _Serialized:
            return entity.value
        manifest = self.manifest
        if manifest and isinstance(entity, ovo_base.VersionedObject):
            target = manifest.get(entity.obj_name(), entity.VERSION)
            return entity.obj_to_primitive(target_version=target,
                                           version_manifest=manifest)
        return super().serialize_entity(ctxt, entity)


class _AutoCap:
    """The ``auto`` cap: asked over RPC, cached for a bounded time."""

    def __init__(self, client, lifetime, timeout):
        self.client = client
        self.lifetime = lifetime
        self.timeout = timeout
        self._lock = threading.Lock()
        self._value = None
        self._expires = 0.0

    def get(self, ctxt):
        with self._lock:
            if time.monotonic() >= self._expires:
                self._value = self._discover(ctxt)
                self._expires = time.monotonic() + self.lifetime
            return self._value

    def _discover(self, ctxt):
        cctxt = self.client.prepare(version='1.3', version_cap=None,
                                    timeout=self.timeout)
        try:
            services = cctxt.call(ctxt, 'get_service_versions')
        except _NOT_AN_OLD_WORKER:
            raise  # e.g. a policy refusal: capping would hide it
        except Exception as exc:  # an old worker, or none answering
            cap = VERSION_ALIASES[OLDEST_SUPPORTED]
            LOG.info('upgrade_levels auto: no worker reported its version '
                     '(%s: %s); capping at %s (release %s)',
                     type(exc).__name__, str(exc).split('\n')[0], cap,
                     OLDEST_SUPPORTED)
            return cap
        cap = lowest_version(s.get('rpc_version') for s in services)
        cap = cap or VERSION_ALIASES[OLDEST_SUPPORTED]
        LOG.info('upgrade_levels auto: %d live workers, lowest RPC version '
                 '%s', len(services), cap)
        return cap


class SchedulerAPI:

    #: kept as a class attribute for callers of the first release
    VERSION_ALIASES = VERSION_ALIASES

    def __init__(self, conf, transport):
        setting = conf.upgrade_levels.scheduler
        target = oslo_messaging.Target(topic=conf.scheduler.topic,
                                       version='1.0')
        #: the configured cap: a version, None (no cap) or 'auto'
        self.version_cap = (AUTO if setting == AUTO
                            else resolve_alias(setting))
        self.serializer = _ManifestSerializer()
        self.client = oslo_messaging.get_rpc_client(
            transport, target, serializer=self.serializer,
            version_cap=None if setting == AUTO else self.version_cap)
        self.report_topic = sched_conf.scheduler.report_topic(conf)
        self.max_message_bytes = conf.limits.max_message_bytes
        self._auto = None
        if setting == AUTO:
            self._auto = _AutoCap(self.client,
                                  conf.upgrade_levels.auto_cache_seconds,
                                  conf.upgrade_levels.auto_timeout)

    def current_cap(self, ctxt=None):
        """The RPC version messages are capped at now (None: no cap);
        with ``auto``, asks the workers when the cached answer expired."""
        if self._auto is not None:
            return self._auto.get(ctxt or sched_context.RequestContext())
        return self.version_cap

    def _prepare(self, ctxt, version, method, topic=None):
        cap = self.current_cap(ctxt)
        if cap is not None and not versionutils.is_compatible(
                version, cap, same_major=True):
            raise exception.InvalidRequest(
                reason='%s needs scheduler RPC API %s but [upgrade_levels] '
                'scheduler caps it at %s' % (method, version, cap))
        self.serializer.manifest = object_manifest(cap)
        kwargs = {'version': version, 'version_cap': cap}
        if topic:
            kwargs['topic'] = topic
        return self.client.prepare(**kwargs)

    def _sized(self, ctxt, method, kwargs):
        """``kwargs`` serialized once, after checking the message's size
        against ``[limits] max_message_bytes`` (``MessageTooLarge``): the
        broker would refuse a message past its own limit, and the client
        would retry it for ever (``MessageDeliveryFailure``)."""
        args, sizes = {}, {}
        for name, value in kwargs.items():
            primitive = self.serializer.serialize_entity(ctxt, value)
            sizes[name] = message_size.encoded_size(primitive)
            args[name] = _Serialized(primitive)
        message_size.check(method, sizes, self.max_message_bytes)
        return args

    def _call(self, cctxt, ctxt, method, **kwargs):
        return cctxt.call(ctxt, method, **self._sized(ctxt, method, kwargs))

    def _cast(self, cctxt, ctxt, method, **kwargs):
        cctxt.cast(ctxt, method, **self._sized(ctxt, method, kwargs))

    def get_service_versions(self, ctxt):
        cctxt = self._prepare(ctxt, '1.3', 'get_service_versions')
        return self._call(cctxt, ctxt, 'get_service_versions')

    def select_destinations(self, ctxt, spec_obj, instance_uuids,
                            return_alternates=False):
        cctxt = self._prepare(ctxt, '1.0', 'select_destinations').prepare(
            call_monitor_timeout=CALL_MONITOR_TIMEOUT)
        return self._call(cctxt, ctxt, 'select_destinations',
                          spec_obj=spec_obj, instance_uuids=instance_uuids,
                          return_alternates=return_alternates)

    def update_resource_stats(self, ctxt, name, stats):
        cctxt = self._prepare(ctxt, '1.0', 'update_resource_stats',
                              topic=self.report_topic)
        self._cast(cctxt, ctxt, 'update_resource_stats', name=name,
                   stats=stats)

    def delete_allocations(self, ctxt, consumer_uuid):
        cctxt = self._prepare(ctxt, '1.1', 'delete_allocations')
        self._cast(cctxt, ctxt, 'delete_allocations',
                   consumer_uuid=consumer_uuid)

    def sync_instance_info(self, ctxt, host, instance_uuids):
        cctxt = self._prepare(ctxt, '1.1', 'sync_instance_info',
                              topic=self.report_topic)
        self._cast(cctxt, ctxt, 'sync_instance_info', host=host,
                   instance_uuids=instance_uuids)

    def update_aggregates(self, ctxt, aggregates):
        cctxt = self._prepare(ctxt, '1.2', 'update_aggregates')
        self._cast(cctxt, ctxt, 'update_aggregates', aggregates=aggregates)

    def delete_aggregate(self, ctxt, aggregate):
        cctxt = self._prepare(ctxt, '1.2', 'delete_aggregate')
        self._cast(cctxt, ctxt, 'delete_aggregate', aggregate=aggregate)

    def update_instance_info(self, ctxt, host, instance_info):
        cctxt = self._prepare(ctxt, '1.2', 'update_instance_info',
                              topic=self.report_topic)
        self._cast(cctxt, ctxt, 'update_instance_info', host=host,
                   instance_info=instance_info)

    def delete_instance_info(self, ctxt, host, instance_uuid):
        cctxt = self._prepare(ctxt, '1.2', 'delete_instance_info',
                              topic=self.report_topic)
        self._cast(cctxt, ctxt, 'delete_instance_info', host=host,
                   instance_uuid=instance_uuid)

    def build_failed(self, ctxt, name):
        cctxt = self._prepare(ctxt, '1.2', 'build_failed')
        self._cast(cctxt, ctxt, 'build_failed', name=name)
