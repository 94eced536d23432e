"""Nova's scheduler options, as this scheduler's: the operator's mapping.

Nova's functional tests configure their scheduler through nova's own
options (``self.flags(enabled_filters=..., group='filter_scheduler')``
...). ``scheduler_options(nova_conf)`` reads them from nova's
``CONF`` as an operator moving from nova-scheduler would, and returns
``(options, findings)``: ``options`` is ``{group: {name: value}}`` for
this scheduler's configuration file, ``findings`` the nova settings that
have no counterpart here (each a line for the test's log and the doc).

The mapping is the table in doc/source/nova-functional.rst:

* ``[filter_scheduler] enabled_filters``: the same names; this
  scheduler's ``ResourceFitFilter``, ``TraitsFilter`` and
  ``AvailabilityZoneFilter`` are always added (nova-scheduler does these
  through Placement: allocation candidates with the flavor's and image's
  traits, and its availability-zone pre-filter);
* nova's Placement pre-filters: ``[scheduler]
  enable_isolated_aggregate_filtering`` is
  ``AggregateRequiredTraitsIsolation``,
  ``limit_tenants_to_placement_aggregate`` is
  ``AggregateTenantAffinityFilter`` with ``[filter_scheduler]
  aggregate_required_for_tenants`` from
  ``placement_aggregate_required_for_tenants``;
* ``[filter_scheduler] weight_classes``: ``all_weighers`` is every
  weigher of this scheduler, a class path its class name; a weigher
  whose multiplier nova has at 0 is left out (nova weighs it as nothing,
  this scheduler refuses a zero multiplier at start-up);
* the multipliers and filter settings of the same name in
  ``[filter_scheduler]``, and ``[scheduler] max_attempts``, as they are.
"""

from oslo_config import cfg

NOVA_WEIGHERS = 'nova.scheduler.weights.'
ALL_WEIGHERS = NOVA_WEIGHERS + 'all_weighers'
#: nova-scheduler asks Placement for these; here they are filters
ALWAYS_FILTERS = ('ResourceFitFilter', 'TraitsFilter',
                  'AvailabilityZoneFilter')
#: nova's [scheduler] pre-filter switches -> the filter that does it here
PREFILTERS = {'enable_isolated_aggregate_filtering':
              'AggregateRequiredTraitsIsolation',
              'limit_tenants_to_placement_aggregate':
              'AggregateTenantAffinityFilter'}
#: [filter_scheduler] options whose meaning is the same on both sides
SAME_FILTER_SCHEDULER = (
    'host_subset_size', 'ram_weight_multiplier', 'cpu_weight_multiplier',
    'disk_weight_multiplier', 'io_ops_weight_multiplier',
    'num_instances_weight_multiplier', 'pci_weight_multiplier',
    'hypervisor_version_weight_multiplier', 'max_io_ops_per_host',
    'max_instances_per_host', 'isolated_images', 'isolated_hosts',
    'restrict_isolated_hosts_to_isolated_images',
    'aggregate_image_properties_isolation_namespace',
    'aggregate_image_properties_isolation_separator',
    'soft_affinity_weight_multiplier',
    'soft_anti_affinity_weight_multiplier',
    'build_failure_weight_multiplier', 'image_props_weight_setting',
    'image_props_weight_multiplier')
#: nova settings with no counterpart: reported only when not the default
NO_COUNTERPART = {
    'filter_scheduler': ('shuffle_best_same_weighed_hosts',
                         'cross_cell_move_weight_multiplier',
                         'image_properties_default_architecture'),
    'scheduler': ('max_placement_results', 'image_metadata_prefilter',
                  'query_placement_for_image_type_support',
                  'query_placement_for_routed_network_aggregates'),
}


def scheduler_options(nova_conf, filters, weighers):
    """``(options, findings)`` (module docstring); ``filters`` are the
    filter names this scheduler has, ``weighers`` its weighers' names,
    each with its multiplier option (or None)."""
    nova_fs = nova_conf.filter_scheduler
    findings = []
    enabled = list(ALWAYS_FILTERS)
    enabled += [name for option, name in PREFILTERS.items()
                if nova_conf.scheduler[option]]
    for name in nova_fs.enabled_filters:
        if name not in filters:
            findings.append('[filter_scheduler] enabled_filters: %s has no '
                            'counterpart; left out' % name)
        elif name not in enabled:
            enabled.append(name)
    group = {name: nova_fs[name] for name in SAME_FILTER_SCHEDULER}
    group['metrics_weight_multiplier'] = nova_conf.metrics.weight_multiplier
    group['enabled_filters'] = enabled
    group['aggregate_required_for_tenants'] = \
        nova_conf.scheduler.placement_aggregate_required_for_tenants
    group['enabled_weighers'] = _weighers(nova_fs.weight_classes, weighers,
                                          group, findings)
    for nova_group, names in NO_COUNTERPART.items():
        for name in names:
            where = nova_conf.get_location(name, nova_group)
            if where is not None and \
                    where.location is not cfg.Locations.opt_default:
                findings.append('[%s] %s = %r has no counterpart' % (
                    nova_group, name, nova_conf[nova_group][name]))
    options = {'filter_scheduler': group,
               'scheduler': {'max_attempts': nova_conf.scheduler.max_attempts}}
    return options, findings


def _weighers(classes, weighers, group, findings):
    enabled = []
    for path in classes:
        if path == ALL_WEIGHERS:
            names = list(weighers)
        else:
            names = [path.rsplit('.', 1)[-1]]
        for name in names:
            if name not in weighers:
                findings.append('[filter_scheduler] weight_classes: %s has '
                                'no counterpart; left out' % path)
            elif group.get(weighers[name]) == 0:
                findings.append('%s: multiplier 0 (%s); left out' %
                                (name, weighers[name]))
            elif name not in enabled:
                enabled.append(name)
    return enabled
