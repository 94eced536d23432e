"""build_failed (cast, since 1.2): a build failed on ``host`` or
``[host, node]``; the build-failure weigher reads the count."""

from scheduler.edge.schemas import common

V1_2 = {
    'type': 'object',
    'required': ['name'],
    'properties': {'name': common.TRACKER_NAME},
}

SCHEMAS = {'1.2': V1_2}
