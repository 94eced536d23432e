"""delete_instance_info (cast, since 1.2): one instance left a host."""

from scheduler.edge.schemas import common

V1_2 = {
    'type': 'object',
    'required': ['host', 'instance_uuid'],
    'properties': {
        'host': common.NAMED_HOST,
        'instance_uuid': common.UUID,
    },
}

SCHEMAS = {'1.2': V1_2}
