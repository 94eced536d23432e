"""Input validation: what a message may contain before it touches state.

Two layers, both raising ``scheduler.exception.InvalidField`` naming the
field (``spec_obj.flavor.vcpus``, ``aggregates[0].uuid``) and what was
wrong:

* ``check_structure(value, path, limits)`` runs on every RPC argument as
  it arrives, before it is turned into objects: nesting depth, list and
  string lengths, the total number of values, non-finite or out-of-range
  numbers, strings that are not valid unicode, and fractional values for
  integer fields of a scheduler object (which oslo.versionedobjects would
  silently truncate). It walks iteratively, so no message can raise a
  RecursionError, in one pass that reads the limits once and names a
  field's path only when it refuses it.
* ``check_request``, ``check_report``, ``check_stats``,
  ``check_aggregate`` and ``check_instance_uuids`` are the meaning checks
  of one method's arguments (called by the manager): a request that claims
  nothing, an instance count past ``[limits] max_instances_per_request``,
  duplicate consumers, a report from the future, a non-finite allocation
  ratio, an id that is not a UUID.

``limits`` is the ``[limits]`` option group (``conf.limits``) or any object
with the same attributes.
"""

import datetime
import functools
import math

from oslo_utils import timeutils
from oslo_utils import uuidutils
from oslo_versionedobjects import fields as ovo_fields

from scheduler import exception
from scheduler.objects import base

_OBJ_NAME = 'scheduler_object.name'
_OBJ_DATA = 'scheduler_object.data'
# Values stored in BIGINT columns and numpy int64 columns.
_INT_RANGE = (-2 ** 63, 2 ** 63 - 1)
RATIO_KEYS = ('cpu_allocation_ratio', 'ram_allocation_ratio',
              'disk_allocation_ratio')


def _invalid(path, reason):
    return exception.InvalidField(field=path, reason=reason)


def _check_scalar(value, node, limits):
    if isinstance(value, str):
        if len(value) > limits.max_string_length:
            raise _invalid(_path(node), 'string of %d characters is longer '
                           'than [limits] max_string_length (%d)' %
                           (len(value), limits.max_string_length))
        if not value.isascii():
            try:
                value.encode('utf-8')
            except UnicodeEncodeError:
                raise _invalid(_path(node),
                               'not valid unicode (lone surrogate)')
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not _INT_RANGE[0] <= value <= _INT_RANGE[1]:
            raise _invalid(_path(node), 'integer out of range (64 bits)')
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _invalid(_path(node), 'not a finite number: %r' % value)


def _integer_fields(primitive):
    """Names of the integer fields of the object ``primitive`` encodes."""
    classes = base.SchedulerObjectRegistry.obj_classes().get(
        primitive.get(_OBJ_NAME)) or []
    if not classes:
        return frozenset()
    return _integer_field_names(classes[0])


@functools.lru_cache(maxsize=None)
def _integer_field_names(cls):
    return frozenset(name for name, field in cls.fields.items()
                     if isinstance(getattr(field, '_type', None),
                                   (ovo_fields.Integer,
                                    ovo_fields.NonNegativeInteger)))


def check_integral(values, integer_fields, path):
    """Refuse fractional values for integer fields (1.5, '1.5')."""
    for name in integer_fields & set(values):
        value = values[name]
        if isinstance(value, float) and not value.is_integer():
            raise _invalid('%s.%s' % (path, name),
                           'must be a whole number, got %r' % value)
        if isinstance(value, str):
            try:
                int(value)
            except ValueError:
                raise _invalid('%s.%s' % (path, name),
                               'must be a whole number, got %r' % value)


def _path(node):
    """The path of a node of the walk: ``(parent node, key)``, the root
    ``(None, path)``. Built only for an error message, so a valid
    message costs no string formatting."""
    parts = []
    while node[0] is not None:
        node, key = node
        parts.append('[%d]' % key if isinstance(key, int) else '.%s' % key)
    parts.append(node[1])
    return ''.join(reversed(parts))


def _children(value, node):
    """(child, child node) pairs of a list, dict or object primitive."""
    if isinstance(value, dict):
        if _OBJ_NAME in value and isinstance(value.get(_OBJ_DATA), dict):
            data = value[_OBJ_DATA]
            fields = _integer_fields(value)
            if fields:
                check_integral(data, fields, _path(node))
            return ([(v, (node, k)) for k, v in data.items()]
                    + [(v, (node, k)) for k, v in value.items()
                       if k != _OBJ_DATA])
        for key in value:
            if not isinstance(key, str):
                raise _invalid(_path(node), 'dict keys must be strings, '
                               'got %s' % type(key).__name__)
        return [(v, (node, k)) for k, v in value.items()]
    return [(v, (node, i)) for i, v in enumerate(value)]


class _Limits:
    """The ``[limits]`` values one walk reads, read once: an oslo.config
    attribute costs more than checking the value it limits."""

    __slots__ = ('max_message_items', 'max_nesting_depth',
                 'max_list_length', 'max_string_length')

    def __init__(self, limits):
        for name in self.__slots__:
            setattr(self, name, getattr(limits, name))


def check_structure(value, path, limits):
    """Check one RPC argument's shape and size (see module docstring),
    in one pass over it."""
    limits = _Limits(limits)
    max_items, max_depth, max_length = (limits.max_message_items,
                                        limits.max_nesting_depth,
                                        limits.max_list_length)
    pending = [(value, (None, path), 1)]
    seen = 0
    containers = (dict, list, tuple)
    while pending:
        item, node, depth = pending.pop()
        seen += 1
        if seen > max_items:
            raise _invalid(path, 'more than [limits] max_message_items '
                           '(%d) values' % max_items)
        if isinstance(item, containers):
            if depth > max_depth:
                raise _invalid(_path(node), 'nested deeper than [limits] '
                               'max_nesting_depth (%d)' % max_depth)
            if len(item) > max_length:
                raise _invalid(_path(node), '%d items, more than [limits] '
                               'max_list_length (%d)' %
                               (len(item), max_length))
            if isinstance(item, dict):
                for key in item:
                    _check_scalar(key, node, limits)
            pending.extend((child, child_node, depth + 1)
                           for child, child_node in _children(item, node))
        else:
            _check_scalar(item, node, limits)


def check_instance_uuids(uuids, path):
    """Duplicate consumers in one request would get two claims each."""
    seen = set()
    for index, uuid in enumerate(uuids or ()):
        if uuid in seen:
            raise _invalid('%s[%d]' % (path, index),
                           'duplicate instance uuid %s' % uuid)
        seen.add(uuid)


def _claims_nothing(flavor):
    if any(k.startswith('resources') for k in flavor.extra_specs or {}):
        return False
    return not (flavor.vcpus or flavor.memory_mb or flavor.root_gb
                or flavor.ephemeral_gb or flavor.swap)


def check_request(spec, instance_uuids, limits):
    """Meaning checks of a select_destinations request."""
    count = spec.num_instances
    if count < 1:
        raise _invalid('spec_obj.num_instances', 'must be at least 1')
    if count > limits.max_instances_per_request:
        raise _invalid('spec_obj.num_instances', '%d is more than [limits] '
                       'max_instances_per_request (%d)' %
                       (count, limits.max_instances_per_request))
    # with resource groups the flavor may be empty (a volume alone); the
    # groups' own amounts are checked by scheduler.model.resource_groups
    if not spec.get('resource_groups') and _claims_nothing(spec.flavor):
        raise _invalid('spec_obj.flavor', 'requests no resources (0 vcpus, '
                       '0 MB, 0 GB): nothing to claim')
    check_instance_uuids(instance_uuids, 'instance_uuids')
    check_instance_uuids(spec.instance_uuids, 'spec_obj.instance_uuids')


def check_not_future(stamp, path, limits, now=None):
    """Refuse a timestamp more than ``max_clock_skew`` ahead of now."""
    if stamp is None:
        return
    now = now or timeutils.utcnow()
    if stamp.tzinfo is not None:
        stamp = stamp.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    ahead = (stamp - now).total_seconds()
    if ahead > limits.max_clock_skew:
        raise _invalid(path, '%s is %.0f s in the future (more than '
                       '[limits] max_clock_skew, %d s)' %
                       (stamp.isoformat(), ahead, limits.max_clock_skew))


def check_stats(stats, node_cls):
    """Fractional amounts in a raw report dict (truncated otherwise)."""
    if isinstance(stats, dict):
        check_integral(stats, _integer_field_names(node_cls), 'stats')


def check_report(node, limits, now=None):
    """Meaning checks of a tracker report (a ComputeNode)."""
    check_not_future(node.get('updated_at'), 'stats.updated_at', limits,
                     now)
    for name in RATIO_KEYS:
        value = node.get(name)
        if value is not None and not math.isfinite(value):
            raise _invalid('stats.%s' % name, 'not a finite number')


def check_aggregate(aggregate, path):
    """An aggregate's id must be a UUID, its ratios finite numbers >= 0."""
    if not uuidutils.is_uuid_like(aggregate.get('uuid')):
        raise _invalid('%s.uuid' % path,
                       'not a UUID: %r' % (aggregate.get('uuid'),))
    metadata = aggregate.get('metadata') or {}
    for key in RATIO_KEYS:
        if key not in metadata:
            continue
        try:
            ratio = float(metadata[key])
        except ValueError:
            ratio = float('nan')
        if not math.isfinite(ratio) or ratio < 0:
            raise _invalid('%s.metadata.%s' % (path, key),
                           'expected a finite number >= 0, got %r' %
                           metadata[key])


def order_stamp(ctxt, limits, now=None):
    """When the caller sent this message (its clock, microseconds), for
    ordering casts; a stamp from further ahead than ``max_clock_skew`` is
    clamped to now, a message without one (an old client) gets now."""
    now = now or timeutils.utcnow()
    stamp = getattr(ctxt, 'sent_at', None)
    if stamp is None:
        return now
    if (stamp - now).total_seconds() > limits.max_clock_skew:
        return now
    return stamp
