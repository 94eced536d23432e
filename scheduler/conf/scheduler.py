"""[scheduler] options: the driver, the RPC topic, claims, refresh and
defaults.

``driver`` is checked when it is read: a name that no ``scheduler.drivers``
entry point has is an invalid value, whose message lists the installed
drivers (``scheduler-server`` reads every option before a worker starts).
"""

import importlib.metadata

from oslo_config import cfg
from oslo_config import types

GROUP = cfg.OptGroup('scheduler', title='Scheduler options')

#: the stevedore namespace of the scheduling drivers
DRIVER_NAMESPACE = 'scheduler.drivers'


def installed_drivers():
    """The names of the installed drivers, sorted."""
    return sorted({e.name for e in importlib.metadata.entry_points(
        group=DRIVER_NAMESPACE)})


class DriverName(types.String):
    """A driver's entry point name; another value is refused with the
    list of installed drivers."""

    def __init__(self):
        super().__init__(type_name='driver name')

    def __call__(self, value):
        value = super().__call__(value)
        available = installed_drivers()
        # none at all: a source tree not installed, nothing to check
        # against (loading the driver fails instead)
        if available and value not in available:
            raise ValueError('unknown driver %r; available in %s: %s' % (
                value, DRIVER_NAMESPACE, ', '.join(available)))
        return value


scheduler_opts = [
    cfg.Opt('driver',
            type=DriverName(),
            default='filter_scheduler',
            help='The scheduling algorithm, by its name in the '
                 '"scheduler.drivers" entry points. "filter_scheduler" '
                 '(the default): greedy, each instance of a request on the '
                 'best host left, in turn. "solver": a request of several '
                 'instances of a server group is placed at once by a '
                 'mixed-integer program over the hosts that pass the '
                 'filters (see the [solver] options); other requests, and '
                 'any the solver cannot answer within its time budget, are '
                 'placed as the filter scheduler does. Both claim the same '
                 'way, so workers of either driver may serve one cloud '
                 'together. An unknown name stops start-up. See '
                 'doc/source/drivers.rst.'),
    cfg.StrOpt('topic',
               default='scheduler',
               help='RPC topic the scheduler workers consume and the '
                    'client sends to. Every scheduler and every client of '
                    'one cloud must use the same value. With [nova] '
                    'enabled it must differ from [nova] topic (Nova\'s '
                    '"scheduler"): use e.g. scheduler_v1.'),
    cfg.StrOpt('report_topic',
               help='RPC topic of the reports trackers cast '
                    '(update_resource_stats, update/delete/sync of instance '
                    'info). Kept apart from "topic" so that a storm of '
                    'reports never queues select_destinations calls behind '
                    'it. Unset: "<topic>_reports".'),
    cfg.IntOpt('report_batch_size',
               default=200, min=1,
               help='With the rabbit driver, a worker takes the report '
                    'topic\'s messages in batches of at most this many '
                    '(the broker pushes it at most twice as many '
                    'unacknowledged ones), checks each as a single '
                    'message is, writes the newest report of each host '
                    'in one transaction and acknowledges the batch once '
                    'it committed. Larger batches cost less CPU per '
                    'report under a burst but hold more providers locked '
                    'while they are written. 1: one message at a time, '
                    'as with any other driver. Related options: '
                    'report_batch_window. See doc/source/delivery.rst.'),
    cfg.FloatOpt('report_batch_window',
                 default=0.25, min=0.001,
                 help='Seconds a worker gathers the report topic\'s '
                      'messages into one batch before it handles them '
                      '(at most; a full batch is handled at once): the '
                      'longest a report waits before its write starts. '
                      'A batch costs one transaction whatever its size, '
                      'so a longer window costs less CPU per report at a '
                      'steady rate (0.25 s against 0.1 s: about a tenth '
                      'less server CPU per report at 300 reports a '
                      'second, doc/source/performance-history.rst); trackers '
                      'report every minute, and claims, not reports, '
                      'keep capacity from being handed out twice. '
                      'Related options: report_batch_size.'),
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
                 default=0.1, min=0.0,
                 help='How a worker learns of the writes of other workers '
                      '(claims, tracker reports, aggregates). A positive '
                      'value, in seconds (default 0.1): a thread of each '
                      'worker reads the change feed that often and '
                      'decisions read memory only, with a view of the '
                      'other workers\' writes at most that stale; a stale '
                      'view may cost a claim conflict and a retry, never an '
                      'overcommit, and a NoValidHost is always checked '
                      'against a fresh view first. A worker\'s own claims, '
                      'aggregates and releases are seen by its next '
                      'decision whatever this value; tracker reports it '
                      'wrote, at its next poll. '
                      '0: every decision reads the feed first (one more '
                      'round trip per decision, about 0.5 ms; see '
                      'doc/source/performance-history.rst). A claim conflict '
                      'always refreshes at once, whatever this value.'),
    cfg.IntOpt('service_down_time',
               default=60, min=1,
               help='Seconds after which a host whose tracker has not '
                    'reported is considered down and is not scheduled to. '
                    'Used by ComputeFilter. Related options: '
                    'disruption_threshold.'),
    cfg.FloatOpt('disruption_threshold',
                 default=0.55, min=0.0, max=1.0,
                 help='Share of all hosts (0.0-1.0) that must fall silent '
                      'at once (and at least 3) for a worker to take the '
                      'silence as its own outage (broker or network), not '
                      'the hosts\': the hosts that were reporting when it '
                      'began then count as up for one more '
                      'service_down_time, so that their trackers can '
                      'report again. Default 0.55, the share at which '
                      'kube\'s node lifecycle controller calls a zone '
                      'unhealthy. 1.0 turns the grace off (only a silence '
                      'of every host counts); 0.0 would grant it to any '
                      'silence of 3 hosts. Related options: '
                      'service_down_time.'),
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
    cfg.BoolOpt('log_decisions',
                default=False,
                help='Log every decision at INFO: its request id, its '
                     'first instance uuid, the hosts chosen, the hosts '
                     'considered and the milliseconds of each phase. '
                     'False (the default): such a line is written at DEBUG '
                     'only, and a request answered NoValidHost at INFO. '
                     'One line per placement costs a worker about 0.1-0.2 '
                     'ms of CPU, a tenth of a placement\'s own '
                     '(doc/source/performance-history.rst); the same '
                     'decisions are '
                     'counted by the metrics endpoint and, with '
                     'notifications on, sent as versioned notifications.'),
    cfg.BoolOpt('aggregate_allocation_ratios',
                default=False,
                help='Let aggregate metadata override the trackers\' '
                     'allocation ratios. When True, an aggregate whose '
                     'metadata sets cpu_allocation_ratio, '
                     'ram_allocation_ratio or disk_allocation_ratio imposes '
                     'that ratio on the capacity of its hosts (the smallest '
                     'wins when several aggregates of a host set one), as '
                     'Nova\'s removed Aggregate{Core,Ram,Disk}Filter did, '
                     'but checked by the claim as well. When False (the '
                     'default, as Nova 34, whose placement inventories carry '
                     'the compute\'s own ratios), such metadata is ignored '
                     'for capacity. Every worker of a deployment must use '
                     'the same value; a change reaches each host\'s stored '
                     'capacity at its next report written (at the latest '
                     'service_down_time / 2 seconds after the restart). '
                     'Related options: default_*_allocation_ratio.'),
    cfg.IntOpt('unconfirmed_claim_grace_period',
               default=600, min=0,
               help='Seconds a claim may stay unconfirmed. When a host\'s '
                    'tracker calls sync_instance_info, claims on that host '
                    'for instances it does not run and that are older than '
                    'this are released. Every worker also releases, at '
                    'least every quarter of this period, claims still '
                    'unconfirmed this long after they were written on any '
                    'host (a caller that never got its answer), so it must '
                    'exceed the time from a claim to its host reporting '
                    'the instance. 0 releases at every sync and disables '
                    'the periodic release.'),
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
