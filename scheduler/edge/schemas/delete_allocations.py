"""delete_allocations (cast, since 1.1): release one consumer's claims."""

from scheduler.edge.schemas import common

V1_1 = {
    'type': 'object',
    'required': ['consumer_uuid'],
    'properties': {'consumer_uuid': common.UUID},
}

SCHEMAS = {'1.1': V1_1}
