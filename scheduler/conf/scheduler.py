"""[scheduler] options: the RPC topic, claims, refresh and defaults."""

from oslo_config import cfg

GROUP = cfg.OptGroup('scheduler', title='Scheduler options')

scheduler_opts = [
    cfg.StrOpt('topic',
               default='scheduler',
               help='RPC topic the scheduler workers consume and the '
                    'client sends to. Every scheduler and every client of '
                    'one cloud must use the same value.'),
    cfg.StrOpt('report_topic',
               help='RPC topic of the reports trackers cast '
                    '(update_resource_stats, update/delete/sync of instance '
                    'info). Kept apart from "topic" so that a storm of '
                    'reports never queues select_destinations calls behind '
                    'it. Unset: "<topic>_reports".'),
    cfg.IntOpt('max_attempts',
               default=3, min=1,
               help='Maximum number of hosts a conductor tries for one '
                    'instance. select_destinations returns at most '
                    'max_attempts - 1 alternates per instance.'),
    cfg.IntOpt('claim_retries',
               default=8, min=1,
               help='How many times one request re-plans after losing a '
                    'claim race to another worker before it answers '
                    'NoValidHost. Each conflict refreshes the host state '
                    'from the database first.'),
    cfg.FloatOpt('refresh_interval',
                 default=0.0, min=0.0,
                 help='How a worker learns of the writes of other workers '
                      '(claims, tracker reports, aggregates). 0 (the '
                      'default): before every scheduling decision it reads '
                      'the change feed (one small query; the rows that '
                      'changed only when something did), so every decision '
                      'sees every write committed before it started. A '
                      'positive value, in seconds: a thread of each worker '
                      'reads the feed that often and decisions read memory '
                      'only, with a view at most that stale; a stale view '
                      'may cost a claim conflict and a retry, never an '
                      'overcommit, and a NoValidHost is always checked '
                      'against a fresh view first. Large clouds: 0.05 to '
                      '0.2 (see doc/performance.rst). A claim conflict '
                      'always refreshes at once, whatever this value.'),
    cfg.IntOpt('service_down_time',
               default=60, min=1,
               help='Seconds after which a host whose tracker has not '
                    'reported is considered down and is not scheduled to. '
                    'Used by ComputeFilter.'),
    cfg.StrOpt('default_availability_zone',
               default='nova',
               help='Availability zone of a host whose tracker reports '
                    'none.'),
    cfg.FloatOpt('default_cpu_allocation_ratio',
                 default=4.0, min=0.0,
                 help='VCPU allocation ratio for hosts that report none '
                      '(or 0.0).'),
    cfg.FloatOpt('default_ram_allocation_ratio',
                 default=1.0, min=0.0,
                 help='MEMORY_MB allocation ratio for hosts that report '
                      'none (or 0.0).'),
    cfg.FloatOpt('default_disk_allocation_ratio',
                 default=1.0, min=0.0,
                 help='DISK_GB allocation ratio for hosts that report none '
                      '(or 0.0).'),
    cfg.IntOpt('unconfirmed_claim_grace_period',
               default=600, min=0,
               help='Seconds a claim may stay unconfirmed. When a host\'s '
                    'tracker calls sync_instance_info, claims on that host '
                    'for instances it does not run and that are older than '
                    'this are released.'),
]


def report_topic(conf):
    return conf.scheduler.report_topic or '%s_reports' % conf.scheduler.topic


def register_opts(conf):
    # A fresh group each time: register_group copies it shallowly, so
    # registering the module's GROUP would share one option table, and
    # every set_override, between all ConfigOpts of the process.
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(scheduler_opts, group=GROUP)


def list_opts():
    return {GROUP: scheduler_opts}
