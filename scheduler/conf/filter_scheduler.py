"""[filter_scheduler] options: which plugins run, how weighers count,
and the limits individual filters apply."""

from oslo_config import cfg

GROUP = cfg.OptGroup('filter_scheduler', title='Filter scheduler options')

filter_scheduler_opts = [
    cfg.ListOpt('enabled_filters',
                default=['ComputeFilter', 'AvailabilityZoneFilter',
                         'ResourceFitFilter', 'TraitsFilter',
                         'ComputeCapabilitiesFilter',
                         'ImagePropertiesFilter',
                         'ServerGroupAntiAffinityFilter',
                         'ServerGroupAffinityFilter', 'SameHostFilter',
                         'DifferentHostFilter'],
                help='Filters run for every request, in this order, by '
                     'entry point name in the "scheduler.filters" '
                     'namespace. An unknown or repeated name stops the '
                     'service at start-up. Vectorized filters run over all '
                     'hosts; per-host filters run only on the survivors.'),
    cfg.ListOpt('enabled_weighers',
                default=['RAMWeigher', 'CPUWeigher', 'DiskWeigher',
                         'ServerGroupSoftAffinityWeigher',
                         'ServerGroupSoftAntiAffinityWeigher',
                         'BuildFailureWeigher'],
                help='Weighers applied to the hosts that pass the filters, '
                     'by entry point name in the "scheduler.weighers" '
                     'namespace. Each weight is normalized to 0..1 and '
                     'multiplied by the weigher\'s multiplier.'),
    cfg.IntOpt('host_subset_size',
               default=1, min=1,
               help='The final host is chosen at random among the best '
                    'host_subset_size hosts. Values above 1 spread '
                    'concurrent schedulers apart and reduce claim '
                    'conflicts, at the cost of a slightly less optimal '
                    'choice.'),
    cfg.FloatOpt('ram_weight_multiplier',
                 default=1.0,
                 help='Multiplier of RAMWeigher. Positive spreads instances '
                      'over the hosts with the most free RAM; negative '
                      'packs them onto the fullest hosts. 0 is rejected '
                      'at start-up: remove the weigher instead.'),
    cfg.FloatOpt('cpu_weight_multiplier',
                 default=1.0,
                 help='Multiplier of CPUWeigher: positive spreads over free '
                      'VCPUs, negative packs.'),
    cfg.FloatOpt('disk_weight_multiplier',
                 default=1.0,
                 help='Multiplier of DiskWeigher: positive spreads over '
                      'free disk, negative packs.'),
    cfg.FloatOpt('io_ops_weight_multiplier',
                 default=-1.0,
                 help='Multiplier of IoOpsWeigher, which weighs hosts by '
                      'the I/O-heavy operations (builds, resizes, '
                      'snapshots...) their tracker reports as '
                      'current_workload. Negative (the default) prefers '
                      'the least busy hosts; positive prefers the busiest. '
                      '0 is rejected at start-up. Related options: '
                      'max_io_ops_per_host.'),
    cfg.FloatOpt('num_instances_weight_multiplier',
                 default=-1.0,
                 help='Multiplier of NumInstancesWeigher, which weighs '
                      'hosts by the instances they run (running_vms). '
                      'Negative (the default) spreads instances onto the '
                      'hosts running the fewest; positive packs them onto '
                      'the hosts running the most. Nova\'s default is 0, '
                      'which here is rejected at start-up: leave the '
                      'weigher out of enabled_weighers instead. Related '
                      'options: max_instances_per_host.'),
    cfg.FloatOpt('metrics_weight_multiplier',
                 default=1.0,
                 help='Multiplier of MetricsWeigher, applied to the '
                      'normalized sum of the metrics listed in [metrics] '
                      'weight_setting. Positive prefers hosts with the '
                      'highest weighted sum, negative the lowest. 0 is '
                      'rejected at start-up. Related options: [metrics] '
                      'weight_setting, required, weight_of_unavailable.'),
    cfg.FloatOpt('pci_weight_multiplier',
                 default=1.0, min=0.0,
                 help='Multiplier of PCIWeigher, which prefers hosts with '
                      'fewer free PCI devices: requests without PCI '
                      'devices stay off PCI hosts, and requests with them '
                      'stack on the hosts with the fewest, keeping large '
                      'pools whole. Must be positive (0 is rejected at '
                      'start-up). Related options: [pci] alias.'),
    cfg.FloatOpt('hypervisor_version_weight_multiplier',
                 default=1.0,
                 help='Multiplier of HypervisorVersionWeigher. Positive '
                      'prefers hosts with the newest hypervisor_version, '
                      'negative the oldest. 0 is rejected at start-up.'),
    cfg.IntOpt('max_io_ops_per_host',
               default=8, min=0,
               help='IoOpsFilter passes only hosts whose tracker reports '
                    'fewer than this many I/O-heavy operations in progress '
                    '(current_workload). Related options: '
                    'io_ops_weight_multiplier.'),
    cfg.IntOpt('max_instances_per_host',
               default=50, min=1,
               help='NumInstancesFilter passes only hosts running fewer '
                    'than this many instances (running_vms, as last '
                    'reported by the tracker). Related options: '
                    'num_instances_weight_multiplier.'),
    cfg.ListOpt('isolated_images',
                default=[],
                help='Image IDs that IsolatedHostsFilter allows only on '
                     'isolated_hosts. Related options: isolated_hosts, '
                     'restrict_isolated_hosts_to_isolated_images.'),
    cfg.ListOpt('isolated_hosts',
                default=[],
                help='Host names reserved by IsolatedHostsFilter for the '
                     'isolated_images. Related options: isolated_images, '
                     'restrict_isolated_hosts_to_isolated_images.'),
    cfg.BoolOpt('restrict_isolated_hosts_to_isolated_images',
                default=True,
                help='If true, IsolatedHostsFilter keeps every other image '
                     '(and volume-backed requests) off isolated_hosts too; '
                     'if false, other images may also use them. Related '
                     'options: isolated_images, isolated_hosts.'),
    cfg.StrOpt('aggregate_image_properties_isolation_namespace',
               help='Prefix of the aggregate metadata keys that '
                    'AggregateImagePropertiesIsolation compares with image '
                    'properties. Unset: every metadata key is compared. '
                    'Related options: '
                    'aggregate_image_properties_isolation_separator.'),
    cfg.StrOpt('aggregate_image_properties_isolation_separator',
               default='.',
               help='Separator between the namespace and the property name '
                    'in aggregate metadata keys, e.g. "os.hw_architecture" '
                    'with namespace "os".'),
    cfg.BoolOpt('aggregate_required_for_tenants',
                default=False,
                help='AggregateTenantAffinityFilter: a request of a project '
                     'that no aggregate names in a filter_tenant_id key '
                     'fits no host (nova\'s [scheduler] '
                     'placement_aggregate_required_for_tenants). False: it '
                     'fits any host. Related options: enabled_filters.'),
    cfg.FloatOpt('soft_affinity_weight_multiplier',
                 default=1.0, min=0.0,
                 help='Multiplier of ServerGroupSoftAffinityWeigher: how '
                      'strongly hosts already running members of a '
                      'soft-affinity group are preferred. Must be '
                      'positive.'),
    cfg.FloatOpt('soft_anti_affinity_weight_multiplier',
                 default=1.0, min=0.0,
                 help='Multiplier of ServerGroupSoftAntiAffinityWeigher: '
                      'how strongly hosts without members of a '
                      'soft-anti-affinity group are preferred. Must be '
                      'positive.'),
    cfg.FloatOpt('build_failure_weight_multiplier',
                 default=1000000.0,
                 help='Multiplier of BuildFailureWeigher: hosts with recent '
                      'failed builds (reported with the client\'s '
                      'build_failed) sink by this much per failure, after '
                      'normalization. The large default moves them behind '
                      'every healthy host.'),
    cfg.ListOpt('image_props_weight_setting',
                default=['os_distro=1.0', 'os_type=1.0'],
                help='ImagePropertiesWeigher: "property=ratio" pairs. A '
                     'host weighs ratio x the number of its instances whose '
                     'image has the same value of the property as the '
                     'request\'s image, summed over these properties. '
                     'Only these properties are kept in memory.'),
    cfg.FloatOpt('image_props_weight_multiplier',
                 default=1.0,
                 help='Multiplier of ImagePropertiesWeigher: positive '
                      'gathers instances of similar images, negative '
                      'spreads them.'),
    cfg.FloatOpt('locality_weight_multiplier',
                 default=10.0, min=0.0,
                 help='Weight a provider gains for each soft locality rule '
                      '(RequestSpec.locality with hard=False) it keeps '
                      'with the providers already chosen for the other '
                      'resource groups of the instance, added to the '
                      'normalized weights of the other weighers. The '
                      'large default lets a soft rule win over every '
                      'other weigher when it can be kept; 0 ignores soft '
                      'rules. Hard rules are filters and ignore this.'),
]


def register_opts(conf):
    # A fresh group each time: register_group copies it shallowly, so
    # registering the module's GROUP would share one option table, and
    # every set_override, between all ConfigOpts of the process.
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(filter_scheduler_opts, group=GROUP)


def list_opts():
    return {GROUP: filter_scheduler_opts}
