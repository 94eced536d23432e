"""update_aggregates (cast, since 1.2): aggregates, created or changed.

``aggregates`` is one Aggregate or a list of them.
"""

from scheduler.edge.schemas import common

V1_2 = {
    'type': 'object',
    'required': ['aggregates'],
    'properties': {
        'aggregates': {'type': 'array', 'items': common.AGGREGATE},
    },
}

SCHEMAS = {'1.2': V1_2}

#: one object or a list of them: one is read (and checked) as a list of one
ONE_OR_LIST = ('aggregates',)
