"""[placement_feed] options: the feed that reads Placement for trackers.

``scheduler-placement-feed`` (``scheduler.placement_feed``) lists
Placement's resource providers every ``interval`` seconds and pushes what
changed to the scheduler as tracker reports and aggregate casts. How it
reaches Placement is keystoneauth1's usual session, auth and adapter
options in this group (as nova's ``[placement]`` group has them), e.g.::

    [placement_feed]
    auth_type = password
    auth_url = http://keystone.example.org/identity
    username = scheduler
    password = secret
    user_domain_name = Default
    project_name = service
    project_domain_name = Default

or, for a Placement with ``[api] auth_strategy = noauth2`` (tests)::

    [placement_feed]
    auth_type = admin_token
    endpoint = http://127.0.0.1:8778
    token = admin

The workers use the same session options to write allocations back to
Placement when ``[nova] enabled`` and ``[nova] placement_write_back`` are
set (``scheduler.nova.placement``). See doc/source/placement-feed.rst.
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'placement_feed'
SERVICE_TYPE = 'placement'

feed_opts = [
    cfg.FloatOpt('interval',
                 default=10.0,
                 min=0.1,
                 help='Seconds between two cycles. A cycle lists every '
                      'resource provider once (one request) and reads the '
                      'inventories, usages, traits and aggregates only of '
                      'providers whose generation moved (four requests '
                      'each). Related options: resend_interval.'),
    cfg.FloatOpt('resend_interval',
                 default=30.0,
                 min=1.0,
                 help='Seconds after which a provider\'s unchanged report '
                      'is sent again, from memory, without asking '
                      'Placement: the scheduler counts a host as down when '
                      'its last report is older than [scheduler] '
                      'service_down_time, so keep this well below it.'),
    cfg.FloatOpt('usage_sweep_interval',
                 default=60.0,
                 min=0.0,
                 help='Seconds within which every provider\'s usages are '
                      'read again even though its generation did not '
                      'move: Placement moves no generation when '
                      'allocations are deleted (an instance deleted, a '
                      'move confirmed or reverted), so without this sweep '
                      'the capacity they free never reaches the scheduler. '
                      'The reads are spread over the cycles (one request '
                      'per provider: N providers cost N / '
                      'usage_sweep_interval requests per second). 0 reads '
                      'every provider\'s usages on every cycle (small '
                      'clouds, tests). Related options: interval.'),
    cfg.BoolOpt('resolve_compute_hosts',
                default=True,
                help='Ask Nova\'s API (GET /os-hypervisors/<uuid>, '
                     'microversion 2.53, once per provider) for the '
                     'compute service host of each compute node provider, '
                     'and report the tree under (host, node): Placement '
                     'names a provider after its node only, while Nova\'s '
                     'conductor, aggregates and server groups name the '
                     'service host. The feed\'s user then also needs '
                     'Nova\'s os_compute_api:os-hypervisors:show rule '
                     '(admin by default). Off, or when Nova does not '
                     'answer, a tree is reported under its root '
                     'provider\'s name, so each compute\'s [DEFAULT] host '
                     'must equal its hypervisor hostname. Related options: '
                     'compute_endpoint_override.'),
    cfg.StrOpt('compute_endpoint_override',
               help='The URL of Nova\'s API (e.g. '
                    'http://nova.example.org/compute/v2.1) when it is not '
                    'taken from the service catalog (service type '
                    'compute). Related options: resolve_compute_hosts.'),
    cfg.IntOpt('read_concurrency',
               default=1,
               min=1,
               help='Providers whose generation moved that are read at '
                    'the same time (threads, four requests each), so '
                    'that a first cycle over a large cloud does not wait '
                    'for one request after the other. 1 reads one '
                    'provider after the other. Raise it only for a '
                    'Placement behind several API workers (uWSGI, '
                    'mod_wsgi), and keep it at or below the requests they '
                    'take at once: connections beyond what Placement '
                    'accepts can time out, which ends the cycle (the '
                    'next one reads what is left). Related options: '
                    'interval.'),
    cfg.BoolOpt('push_aggregates',
                default=True,
                help='Push Placement\'s aggregates (membership only: '
                     'Placement has no names or metadata) with '
                     'update_aggregates and delete_aggregate. Set it to '
                     'false when Nova\'s API casts its host aggregates to '
                     'this scheduler ([nova] enabled = true): those casts '
                     'carry the same membership with the metadata '
                     '(availability_zone ...) that a membership-only '
                     'cast would replace.'),
]


def _adapter_opts():
    """keystoneauth1's adapter options, with Placement's service type."""
    opts = ks_loading.get_adapter_conf_options(include_deprecated=False)
    for opt in opts:
        if opt.dest == 'service_type':
            opt.default = SERVICE_TYPE
    return opts


def register_opts(conf):
    conf.register_opts(feed_opts, group=GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)
    conf.register_opts(_adapter_opts(), group=GROUP)


def list_opts():
    return {GROUP: feed_opts
            + ks_loading.get_session_conf_options()
            + ks_loading.get_auth_common_conf_options()
            + ks_loading.get_auth_plugin_conf_options('admin_token')
            + _adapter_opts()}
