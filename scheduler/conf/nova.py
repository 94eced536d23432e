"""[nova] options: serve Nova's own scheduler RPC API beside this one.

With ``enabled``, every worker that serves decisions also listens on
Nova's exchange and topic (``scheduler.nova.endpoint``), so that an
unmodified Nova 34 conductor, API and computes talk to this scheduler as
they talk to nova-scheduler. With ``placement_write_back`` the
allocation of each instance is also written to Placement
(``scheduler.nova.placement``), reached with the keystoneauth1
options of ``[placement_feed]``. See doc/source/nova-rpc-differences.rst.
"""

from oslo_config import cfg

GROUP = 'nova'
#: a UUID in its canonical text form
UUID_PATTERN = ('^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                '[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')

nova_opts = [
    cfg.BoolOpt('enabled',
                default=False,
                help='Also serve Nova\'s scheduler RPC API (versions 4.0 to '
                     '4.5: select_destinations and the five casts of '
                     'aggregates and instances) on [nova] exchange and '
                     '[nova] topic, fanout included, in every worker that '
                     'serves decisions. Stop nova-scheduler first: both '
                     'would take the same calls. Related options: '
                     'exchange, topic, cell_uuid, granted_roles.'),
    cfg.StrOpt('exchange',
               default='nova',
               help='The exchange Nova\'s services use: Nova\'s [DEFAULT] '
                    'control_exchange (default nova). The transport is '
                    'this scheduler\'s [DEFAULT] transport_url, which must '
                    'therefore reach Nova\'s broker and virtual host.'),
    cfg.StrOpt('topic',
               default='scheduler',
               help='The topic Nova\'s clients call (nova.scheduler.rpcapi '
                    'RPC_TOPIC, "scheduler"). It must differ from this '
                    'scheduler\'s [scheduler] topic and report topic, '
                    'whatever the exchanges: RabbitMQ names a topic\'s '
                    'queue after the topic alone, so with [nova] enabled '
                    'set [scheduler] topic to another name (e.g. '
                    'scheduler_v1); a worker refuses to start otherwise.'),
    cfg.StrOpt('cell_uuid',
               regex=UUID_PATTERN,
               help='The UUID of the Nova cell the hosts are in ("nova-'
                    'manage cell_v2 list_cells", usually cell1), sent as '
                    'Selection.cell_uuid; Nova compares it with the '
                    'instance\'s cell when it moves an instance. Required '
                    'when enabled is true: one cell per scheduler. '
                    'Possible values: a UUID.'),
    cfg.ListOpt('granted_roles',
                default=['service'],
                help='Roles added to the caller\'s roles on every message '
                     'received on Nova\'s exchange, before the policy '
                     'rules (scheduler:<method>) are checked. Nova\'s '
                     'conductor calls with the end user\'s context (roles '
                     'such as member, reader), which the default rules '
                     'refuse; a broker user allowed on Nova\'s exchange is '
                     'a Nova service. Set it to an empty list to write '
                     'rules on Nova\'s own roles instead.'),
    cfg.BoolOpt('placement_write_back',
                default=True,
                help='With enabled, write the allocation of each instance '
                     'nova named to Placement (PUT /allocations/<instance> '
                     'with consumer generations, as nova-scheduler does) '
                     'before select_destinations answers; if Placement '
                     'refuses it (409), release the claims and plan again, '
                     'twice at most, then answer NoValidHost. Placement is '
                     'reached with the keystoneauth1 options of '
                     '[placement_feed] (auth_type, endpoint_override ...), '
                     'whose user then needs Placement\'s allocation rules. '
                     'Set it to false only when nothing in the deployment '
                     'reads allocations from Placement (no quota counting, '
                     'no moves). Related options: [placement_feed] '
                     'auth_type.'),
]


def register_opts(conf):
    conf.register_opts(nova_opts, group=GROUP)


def list_opts():
    return {GROUP: nova_opts}
