"""Loads the filter and weigher pipelines from stevedore entry points.

Names come from ``[filter_scheduler] enabled_filters`` and
``enabled_weighers``, are loaded in that order, and are validated at
start-up: an unknown name, a name given twice or a weigher with a zero
multiplier raises ``PluginLoadError`` saying which and what is available.

``RequestChecks(plugins)`` is the plugins' part of the RPC edge's check:
called with a request (a ``RequestSpec``), it runs the ``check_request``
hook of every plugin that has one, so a hint or extra spec a plugin owns
is refused with ``InvalidField`` before planning, not while filtering.

``StoredData`` is everything a plugin's ``preload(request, store)`` hook
may read from the database (``scheduler.filters.base``): a few read-only
queries, scoped to one request. ``preload(plugins, request, store)`` runs
the hooks of a pipeline and keeps their answers in the request state.
"""

from stevedore import named

from scheduler import exception
from scheduler.db import groups as db_groups
from scheduler.db import instances as db_instances
from scheduler.filters import base as filters_base
from scheduler.model import request_state
from scheduler.weighers import base as weighers_base

FILTER_NAMESPACE = 'scheduler.filters'
WEIGHER_NAMESPACE = 'scheduler.weighers'


def _available(namespace):
    from stevedore import extension
    return sorted(extension.ExtensionManager(namespace).names())


def _load(namespace, names, conf, kind):
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise exception.PluginLoadError(
            reason='%s listed more than once: %s' %
            (kind, ', '.join(duplicates)))
    missing = []
    manager = named.NamedExtensionManager(
        namespace, names=list(names), name_order=True, invoke_on_load=True,
        invoke_args=(conf,),
        on_missing_entrypoints_callback=lambda m: missing.extend(m),
        propagate_map_exceptions=True,
        on_load_failure_callback=_raise_load_failure)
    if missing:
        raise exception.PluginLoadError(
            reason='unknown %s %s; available in %s: %s' %
            (kind, ', '.join(sorted(missing)), namespace,
             ', '.join(_available(namespace))))
    return [ext.obj for ext in manager]


def _raise_load_failure(manager, entrypoint, exc):
    raise exception.PluginLoadError(
        reason='cannot load %s: %s' % (entrypoint.name, exc))


def load_filters(conf):
    return _load(FILTER_NAMESPACE, conf.filter_scheduler.enabled_filters,
                 conf, 'filter')


def load_weighers(conf):
    weighers = _load(WEIGHER_NAMESPACE,
                     conf.filter_scheduler.enabled_weighers, conf, 'weigher')
    for weigher in weighers:
        if weigher.multiplier == 0:
            raise exception.PluginLoadError(
                reason='%s has multiplier 0 (%s); remove it from '
                'enabled_weighers instead' %
                (weigher.name, weigher.multiplier_option))
    return weighers


class RequestChecks:
    """See the module docstring. Plugins whose ``check_request`` is the
    base class's no-op are left out, and without any the call costs
    nothing."""

    def __init__(self, plugins):
        defaults = (filters_base.BaseFilter.check_request,
                    weighers_base.BaseWeigher.check_request)
        self.plugins = [p for p in plugins
                        if type(p).check_request not in defaults]

    def __call__(self, spec):
        """Run the checks on ``spec``; the ``RequestState`` they read
        (for the driver to plan with: ``RequestState.for_planning``), or
        None without any check."""
        if not self.plugins:
            return None
        request = request_state.RequestState.from_spec(spec)
        for plugin in self.plugins:
            plugin.check_request(request)
        return request


class StoredData:
    """The database reads a preload hook may do, for one request.

    Read-only, and narrow on purpose: a plugin that needs another kind of
    stored data gets a method here, not a database handle. Each call is
    one query; a hook calls what it needs once per planning attempt.
    """

    def __init__(self, db, consumers=()):
        self._db = db
        #: the request's own instances: a reschedule or a move must not
        #: count itself
        self.consumers = frozenset(consumers)

    def instance_hosts(self, instance_uuids):
        """Frozenset of the hosts that run (as their trackers report) or
        hold claims for any of ``instance_uuids``."""
        return frozenset(db_instances.hosts_of(self._db, instance_uuids))

    def group_member_hosts(self, group_uuid):
        """Counter of host -> members of server group ``group_uuid``
        that claims placed there, the request's own instances left out."""
        return db_groups.member_hosts(self._db, group_uuid,
                                      exclude_consumers=tuple(
                                          self.consumers))

    def reported_members(self, instance_uuids):
        """host -> how many of ``instance_uuids`` its tracker reports,
        the request's own instances left out."""
        return db_instances.count_by_host(
            self._db, [uuid for uuid in instance_uuids
                       if uuid not in self.consumers])


def preload(pipeline, request, store):
    """Run the ``preload`` hook of every plugin of ``pipeline`` (filters
    and weighers) and keep what each returns, None excepted, in
    ``request.preloaded`` under its name; what an earlier planning
    attempt kept is dropped first."""
    request.preloaded = {}
    for plugin in pipeline:
        value = plugin.preload(request, store)
        if value is not None:
            request.preloaded[plugin.name] = value
