"""[filter_scheduler] options: which plugins run and how they weigh."""

from oslo_config import cfg

GROUP = cfg.OptGroup('filter_scheduler', title='Filter scheduler options')

filter_scheduler_opts = [
    cfg.ListOpt('enabled_filters',
                default=['ComputeFilter', 'AvailabilityZoneFilter',
                         'ResourceFitFilter'],
                help='Filters run for every request, in this order, by '
                     'entry point name in the "scheduler.filters" '
                     'namespace. An unknown or repeated name stops the '
                     'service at start-up. Vectorized filters run over all '
                     'hosts; per-host filters run only on the survivors.'),
    cfg.ListOpt('enabled_weighers',
                default=['RAMWeigher', 'CPUWeigher'],
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
]


def register_opts(conf):
    conf.register_group(GROUP)
    conf.register_opts(filter_scheduler_opts, group=GROUP)


def list_opts():
    return {GROUP: filter_scheduler_opts}
