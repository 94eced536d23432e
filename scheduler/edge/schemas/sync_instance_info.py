"""sync_instance_info (cast, since 1.1): every instance a host runs."""

from scheduler.edge.schemas import common

V1_1 = {
    'type': 'object',
    'required': ['host', 'instance_uuids'],
    'properties': {
        'host': common.NAMED_HOST,
        'instance_uuids': dict(common.UUIDS,
                               **{'x-reason': 'expected a list of UUIDs'}),
    },
}

SCHEMAS = {'1.1': V1_1}
