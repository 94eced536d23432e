"""update_resource_stats (cast, since 1.0): a tracker's report.

``name`` is ``host`` or ``[host, node]``; ``stats`` a dict of ComputeNode
fields (a plain dict, a ComputeNode, or nova's ComputeNode primitive).
The schema applies to the fields the tracker sent, as they arrive; the
report is read into a ComputeNode afterwards (``ComputeNode.from_stats``,
which also checks the generic inventory).
"""

from scheduler.edge.schemas import common

V1_0 = {
    'type': 'object',
    'required': ['name', 'stats'],
    'properties': {
        'name': common.REPORT_NAME,
        'stats': common.COMPUTE_NODE,
    },
}

SCHEMAS = {'1.0': V1_0}

#: a plain dict in these arguments holds the fields of this object, so
#: its integer fields get the whole-number check of the raw message
RAW_OBJECTS = {'stats': 'ComputeNode'}
