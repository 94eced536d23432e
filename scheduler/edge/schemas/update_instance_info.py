"""update_instance_info (cast, since 1.2): instances a host runs.

``instance_info`` is one InstanceInfo or a list of them.
"""

from scheduler.edge.schemas import common

V1_2 = {
    'type': 'object',
    'required': ['host', 'instance_info'],
    'properties': {
        'host': common.NAMED_HOST,
        'instance_info': {'type': 'array', 'items': common.INSTANCE_INFO},
    },
}

SCHEMAS = {'1.2': V1_2}

#: one object or a list of them: one is read (and checked) as a list of one
ONE_OR_LIST = ('instance_info',)
