"""[limits] options: how large and how deep one RPC message may be.

Every limit is enforced by the worker before a message reaches the
manager (``scheduler.edge.validation``); a call past a limit is answered with
``InvalidField`` naming the field and the limit, a cast is dropped with one
warning. No limit changes how a valid request is scheduled.
"""

from oslo_config import cfg

GROUP = 'limits'

limits_opts = [
    cfg.IntOpt('max_instances_per_request',
               default=1000, min=1,
               help='Largest num_instances one select_destinations call may '
                    'ask for (default 1000). A larger request is refused '
                    'at once instead of occupying a worker. Related '
                    'options: max_list_length.'),
    cfg.IntOpt('max_list_length',
               default=100000, min=1,
               help='Longest list or dict in a message (hosts of an '
                    'aggregate, instance uuids of a request or a sync, '
                    'metadata), in items (default 100000, enough for a '
                    '100k-host aggregate).'),
    cfg.IntOpt('max_string_length',
               default=65535, min=1,
               help='Longest string in a message, in characters (default '
                    '65535; nova\'s largest text columns hold 64 KiB).'),
    cfg.IntOpt('max_nesting_depth',
               default=32, min=4,
               help='Deepest nesting of lists, dicts and objects in a '
                    'message (default 32). Deeper messages are refused '
                    'before they are decoded into objects.'),
    cfg.IntOpt('max_message_items',
               default=1000000, min=1,
               help='Most values (strings, numbers, list and dict items) '
                    'one message may hold in total (default 1000000). '
                    'Bounds the memory and time one message can cost.'),
    cfg.IntOpt('max_message_bytes',
               default=32 * 1024 * 1024, min=1024,
               help='Largest size of a message body after decompression, '
                    'in bytes (default 32 MiB: the largest message the '
                    'other limits allow in practice, an aggregate of '
                    'max_list_length hosts with 255-character names, '
                    'is about 25 MiB). Workers refuse a larger body '
                    'before decoding it, and inflate a compressed body '
                    'at most this far, then refuse it. '
                    'Clients (SchedulerClient) refuse to send a message '
                    'whose arguments, as encoded on the wire, are larger, '
                    'with MessageTooLarge (an InvalidField naming the '
                    'method, the argument, the size and this limit). Keep '
                    'it below the broker\'s own maximum with room for the '
                    'envelope (about 1 KiB): RabbitMQ refuses larger '
                    'messages (max_message_size, 128 MiB by default in '
                    'RabbitMQ 3.8-3.13, see `rabbitmqctl environment`), '
                    'and the client would retry such a publish for ever.'),
    cfg.IntOpt('max_clock_skew',
               default=300, min=0,
               help='Seconds a timestamp in a message (a tracker\'s '
                    'updated_at, a caller\'s send time) may lie in the '
                    'future of this worker\'s clock (default 300). A '
                    'report stamped further ahead is refused; any send or '
                    'report time ahead of this worker\'s clock is ordered '
                    'as this worker\'s now (doc/source/ordering.rst).'),
]


def register_opts(conf):
    conf.register_opts(limits_opts, group=GROUP)


def list_opts():
    return {GROUP: limits_opts}
