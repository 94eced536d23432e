"""Schema fragments several methods share: ids, names, objects' fields.

Plain dicts of JSON Schema (draft 2020-12) plus this project's keywords
(``scheduler.edge.schemas.keywords``). They describe an argument as it
arrives: an object is the mapping of the fields its sender set (on the
wire, the data of its primitive: ``scheduler.edge.schemas.wire``), a
timestamp ISO 8601 text. Generic limits (depth, sizes, non-finite
numbers, 64-bit integers, fractional values for integer fields) are
held by the same pass of the validator, from ``[limits]``
(``scheduler.edge.schemas.bounds``), not written here.
"""

from scheduler.db import models
from scheduler.model import names
from scheduler.model import resource_groups
from scheduler.objects import request_spec
from scheduler.edge.schemas import keywords

UUID = {'type': 'string', 'format': 'uuid'}
UUIDS = {'type': 'array', 'items': UUID}
#: consumers of one request: each at most once
NULLABLE_UUIDS = {'type': ['array', 'null'], 'items': UUID,
                  'distinctUuids': True}
#: a host, node, zone or aggregate name (``scheduler.model.names``)
NAME = {'type': 'string', 'minLength': 1, 'name': True}
HOST = NAME
#: a host name, its error worded
NAMED_HOST = dict(NAME, **{'x-reason': 'expected a host name (%s)' %
                           names.RULE})
NULLABLE_NAME = {'type': ['string', 'null'], 'name': True}
NAMES = {'type': 'array', 'items': NAME}
NULLABLE_STRING = {'type': ['string', 'null']}
STRINGS = {'type': 'array', 'items': {'type': 'string'}}
STRING_MAP = {'type': 'object', 'additionalProperties': {'type': 'string'}}
COUNT = {'type': 'integer', 'minimum': 0}


def stored_in(column):
    """A string (or null) the database keeps in ``column``: at most as
    many characters as the column holds, so that a longer one is refused
    here, naming its field, and never reaches the database."""
    return {'type': ['string', 'null'], 'maxLength': column.type.length}

#: ``host`` or ``[host, node]`` (``scheduler.model.names``)
TRACKER_NAME = {
    'anyOf': [HOST, {'type': 'array', 'minItems': 2, 'maxItems': 2,
                     'items': HOST}],
    'x-reason': 'expected a host name or a [host, node] pair of names '
                '(%s)' % names.RULE,
}
#: a report's ``host`` or ``[host, node]``: a part of a pair that is no
#: name is named itself (``name[1]``), as reading the report names it
REPORT_NAME = {
    'if': {'type': 'array'},
    'then': {'minItems': 2, 'maxItems': 2, 'items': HOST,
             'x-reason': 'expected a [host, node] pair of names'},
    'else': dict(HOST, **{'x-reason': TRACKER_NAME['x-reason']}),
}

FLAVOR = {
    'type': 'object',
    'required': ['vcpus', 'memory_mb'],
    'properties': {
        'vcpus': COUNT, 'memory_mb': COUNT, 'root_gb': COUNT,
        'ephemeral_gb': COUNT, 'swap': COUNT, 'extra_specs': STRING_MAP,
    },
}

INSTANCE_GROUP = {
    'type': ['object', 'null'],
    'required': ['policy'],
    'properties': {
        'uuid': stored_in(models.instance_groups.c.uuid),
        'policy': {'enum': list(request_spec.GROUP_POLICIES)},
        'rules': {
            'type': 'object',
            'properties': {'max_server_per_host': {
                'type': 'string', 'pattern': r'^\s*\+?0*[1-9][0-9]*\s*$',
                'x-reason': 'expected a positive integer'}},
        },
        'members': STRINGS,
        'hosts': STRINGS,
    },
}

TRAITS = {'type': 'array', 'items': {'trait': True, 'name': True}}

RESOURCE_GROUP = {
    'type': 'object',
    'required': ['name'],
    'properties': {
        'name': {'type': 'string', 'minLength': 1},
        'kind': {'providerKind': True},
        'resources': {
            'type': 'object', 'resourceClassKeys': True,
            'additionalProperties': {'type': 'integer',
                                     'exclusiveMinimum': 0}},
        'required_traits': TRAITS,
        'forbidden_traits': TRAITS,
        'any_traits': {'type': 'array',
                       'items': {'type': 'array', 'minItems': 1,
                                 'items': {'trait': True}}},
    },
    'groupRules': True,
}

LOCALITY_RULE = {
    'type': 'object',
    'required': ['groups', 'scope'],
    'properties': {
        'groups': STRINGS,
        'scope': {'type': 'string', 'pattern': resource_groups.SCOPE_PATTERN,
                  'x-reason': 'a locality key (rack, row, '
                              'availability_zone, host ...)'},
        'policy': {'enum': list(resource_groups.POLICIES)},
        'hard': {'type': 'boolean'},
    },
}

#: hints whose values are instance UUIDs (SameHost/DifferentHost filters)
UUID_HINTS = ('same_host', 'different_host')

#: ``num_instances`` left out is 1; ``flavor`` left out is refused when
#: reading the request, unless it asks for resource groups alone (an
#: empty flavor then: ``scheduler.edge.arguments``)
REQUEST_SPEC = {
    'type': 'object',
    'x-object': 'RequestSpec',
    'properties': {
        'num_instances': {'type': 'integer', 'minimum': 1,
                          'limitMaximum': 'max_instances_per_request'},
        'flavor': FLAVOR,
        'image': {'type': ['object', 'null']},
        'scheduler_hints': {
            'type': 'object',
            'properties': {hint: UUIDS for hint in UUID_HINTS},
        },
        'instance_group': INSTANCE_GROUP,
        'instance_uuids': NULLABLE_UUIDS,
        'resource_groups': {'type': 'array', 'items': RESOURCE_GROUP,
                            'uniqueGroupNames': True,
                            'oneComputeGroup': True},
        'locality': {'type': 'array', 'items': LOCALITY_RULE},
    },
    # cross-field rules of the whole request
    'localityNamesGroups': True,
    'claimsSomething': True,
    'cpuPolicy': True,
}

#: aggregate metadata keys that are allocation ratios
RATIO_KEYS = ('cpu_allocation_ratio', 'ram_allocation_ratio',
              'disk_allocation_ratio')

AGGREGATE = {
    'type': 'object',
    'x-object': 'Aggregate',
    'required': ['uuid'],
    'properties': {
        'uuid': UUID,
        'name': NULLABLE_NAME,
        'hosts': NAMES,
        'metadata': {
            'type': 'object',
            'nameKeys': True,
            'properties': {key: {'ratioText': True} for key in RATIO_KEYS},
        },
    },
}

INSTANCE_INFO = {
    'type': 'object',
    'x-object': 'InstanceInfo',
    'required': ['uuid'],
    'properties': {
        'uuid': UUID,
        'node': stored_in(models.instances.c.node),
        'project_id': stored_in(models.instances.c.project_id),
        'group_uuid': stored_in(models.instances.c.group_uuid),
    },
}

_RATIO = {'type': ['number', 'null'], 'minimum': 0,
          'maximum': keywords.MAX_ALLOCATION_RATIO}

#: a tracker's report: the fields it sent (read into a ComputeNode
#: afterwards, the others at their defaults)
COMPUTE_NODE = {
    'type': 'object',
    'properties': {
        'updated_at': {'notInFuture': True},
        'uuid': stored_in(models.providers.c.uuid),
        'cpu_allocation_ratio': _RATIO,
        'ram_allocation_ratio': _RATIO,
        'disk_allocation_ratio': _RATIO,
        'availability_zone': NULLABLE_NAME,
        'inventories': {
            'type': 'object',
            'additionalProperties': {
                'type': 'object',
                'properties': {'allocation_ratio': _RATIO}}},
        'traits': TRAITS,
        'locality': {'type': 'object', 'nameKeys': True,
                     'additionalProperties': NAME},
    },
    'statesCapacity': True,
    'capacityFits': True,
}
