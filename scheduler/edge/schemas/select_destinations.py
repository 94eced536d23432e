"""select_destinations (call, since 1.0): where to place a request.

``spec_obj`` is a RequestSpec (a nova RequestSpec primitive is read into
one first, see ``scheduler.edge.arguments``); ``instance_uuids`` the
consumers to claim for, distinct; ``return_alternates`` a boolean.
"""

from scheduler.edge.schemas import common

V1_0 = {
    'type': 'object',
    'required': ['spec_obj'],
    'properties': {
        'spec_obj': common.REQUEST_SPEC,
        'instance_uuids': common.NULLABLE_UUIDS,
        'return_alternates': {'type': 'boolean'},
    },
}

SCHEMAS = {'1.0': V1_0}
