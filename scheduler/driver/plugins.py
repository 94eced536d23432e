"""Loads the filter and weigher pipelines from stevedore entry points.

Names come from ``[filter_scheduler] enabled_filters`` and
``enabled_weighers``, are loaded in that order, and are validated at
start-up: an unknown name, a name given twice or a weigher with a zero
multiplier raises ``PluginLoadError`` saying which and what is available.
"""

from stevedore import named

from scheduler import exception

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
