"""The arguments of every RPC method, per version: one JSON Schema each.

One module per method holds ``SCHEMAS``, ``{version: schema}``, keyed by
the RPC version in which the method (or a change of its arguments) came
in; a message of version V is checked against the newest schema not
newer than V. The schemas are plain dicts of JSON Schema (draft 2020-12)
plus this project's keywords (``keywords``), applied once per message by
``scheduler.edge.validation`` before the manager runs; they are also the
reference page ``doc/source/rpc-reference.rst`` (a unit test holds the
page to them).

Every schema is of the arguments as one object: ``properties`` names
every argument the method takes, in order (any other is refused by
name), ``required`` the ones a message must carry.

>>> schema_for('delete_allocations', '1.2')['required']
['consumer_uuid']
"""

import importlib

from oslo_utils import versionutils

#: method -> how it is sent (``call`` or ``cast``)
METHODS = {
    'select_destinations': 'call',
    'update_resource_stats': 'cast',
    'delete_allocations': 'cast',
    'sync_instance_info': 'cast',
    'update_aggregates': 'cast',
    'delete_aggregate': 'cast',
    'update_instance_info': 'cast',
    'delete_instance_info': 'cast',
    'build_failed': 'cast',
    'get_service_versions': 'call',
}


def module(method):
    """The module describing ``method`` (KeyError if there is none)."""
    if method not in METHODS:
        raise KeyError(method)
    return importlib.import_module('scheduler.edge.schemas.' + method)


def versions(method):
    """``{version: schema}`` of ``method``, oldest first."""
    schemas = module(method).SCHEMAS
    return {v: schemas[v] for v in sorted(
        schemas, key=versionutils.convert_version_to_tuple)}


def schema_for(method, version):
    """The schema a message of ``method`` at ``version`` is checked
    against: the newest not newer than ``version``. A message older than
    the method is checked against its first schema (oslo.messaging
    dispatches it; refusing it is the client's ``can_send_version``)."""
    wanted = versionutils.convert_version_to_tuple(version or '1.0')
    chosen = None
    for known, schema in versions(method).items():
        if chosen is None or \
                versionutils.convert_version_to_tuple(known) <= wanted:
            chosen = schema
    return chosen


def raw_objects(method):
    """``{argument: object name}``: plain dicts read as that object."""
    return getattr(module(method), 'RAW_OBJECTS', {})


def one_or_list(method):
    """The arguments of ``method`` that may hold one object or a list:
    one is read, and checked, as a list of one."""
    return getattr(module(method), 'ONE_OR_LIST', ())
