"""delete_aggregate (cast, since 1.2): an Aggregate, or its UUID, gone."""

from scheduler.edge.schemas import common

V1_2 = {
    'type': 'object',
    'required': ['aggregate'],
    'properties': {
        'aggregate': {
            'anyOf': [common.UUID, {
                'type': 'object', 'required': ['uuid'],
                'properties': {'uuid': common.UUID}}],
            'x-reason': 'neither an Aggregate nor its UUID'},
    },
}

SCHEMAS = {'1.2': V1_2}
