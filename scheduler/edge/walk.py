"""The ``[limits]`` walk of a raw RPC argument, in Python.

``check_structure(value, path, limits, raw_object=None)`` walks one
argument iteratively (no message can raise a RecursionError) and raises
``scheduler.exception.InvalidField`` naming the first field that breaks
a rule: nesting depth, list and string lengths, the number of values,
non-finite or out-of-range numbers, strings that are not valid unicode,
and values of a scheduler object's fields that oslo.versionedobjects
would coerce into something else (``check_field_values``). ``Limits``
reads the ``[limits]`` values a walk uses, once.

The edge's one pass of the validator (``scheduler.edge.validation``)
holds the same rules (``scheduler.edge.schemas.bounds``); this walk is
its second opinion: it words a refusal, and it checks what the pass
cannot vouch for (a message whose text length is not known, or that
holds a surrogate escape).
"""

import functools
import math

from oslo_versionedobjects import fields as ovo_fields

from scheduler import exception
from scheduler.objects import base
from scheduler.edge.schemas import bounds

_OBJ_NAME = 'scheduler_object.name'
_OBJ_DATA = 'scheduler_object.data'


def invalid(path, reason):
    return exception.InvalidField(field=path, reason=reason)


def _check_scalar(value, node, limits):
    if isinstance(value, str):
        if len(value) > limits.max_string_length:
            raise invalid(_path(node), 'string of %d characters is longer '
                           'than [limits] max_string_length (%d)' %
                           (len(value), limits.max_string_length))
        if not value.isascii():
            try:
                value.encode('utf-8')
            except UnicodeEncodeError:
                raise invalid(_path(node),
                               'not valid unicode (lone surrogate)')
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not bounds.in_int_range(value):
            raise invalid(_path(node), 'integer out of range (64 bits)')
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise invalid(_path(node), 'not a finite number: %r' % value)


def _field_checks(primitive, where, name=None):
    """``{field: check(value, path, name)}`` of the object ``primitive``
    encodes (or, for a plain dict, of object ``name``): ``_value_check``
    of each field whose type has one. An object name that is not a
    string is refused here (``where()``: the primitive's path)."""
    name = name or primitive.get(_OBJ_NAME)
    if not isinstance(name, str):
        raise invalid('%s.%s' % (where(), _OBJ_NAME), 'expected the name '
                       'of an object, got %s' % exception.echo(name))
    classes = base.SchedulerObjectRegistry.obj_classes().get(name) or []
    if not classes:
        return {}
    return _checks_of(classes[0])


@functools.lru_cache(maxsize=None)
def _checks_of(cls):
    checks = ((name, _value_check(getattr(field, '_type', None)))
              for name, field in cls.fields.items())
    return {name: check for name, check in checks if check is not None}


def _value_check(field_type):
    """``check(value, path, name)`` of a value oslo.versionedobjects would
    coerce with ``field_type`` into something other than what was sent:
    a fractional number or a string truncated or parsed into an integer,
    a string parsed into a float that is not finite, anything but a
    boolean made one (``bool('false')`` is True); the values of a dict
    of such. None for a type that needs none."""
    if isinstance(field_type, (ovo_fields.Integer,
                               ovo_fields.NonNegativeInteger)):
        return _whole
    if isinstance(field_type, (ovo_fields.Float,
                               ovo_fields.NonNegativeFloat)):
        return _finite
    if isinstance(field_type, ovo_fields.Boolean):
        return _boolean
    if isinstance(field_type, ovo_fields.Dict):
        each = _value_check(getattr(field_type._element_type, '_type',
                                    None))
        if each is None:
            return None

        def each_value(value, path, name):
            if isinstance(value, dict) and value:
                inner = _Lazy(lambda: '%s.%s' % (path, name))
                for key, item in value.items():
                    each(item, inner, key)
        return each_value
    return None


# Each check takes the value and where it is (``path``, ``name``): the
# field's path is formatted only for an error.

class _Lazy:
    """A path formatted (``fn()``) only when an error message names it."""

    __slots__ = ('fn',)

    def __init__(self, fn):
        self.fn = fn

    def __str__(self):
        return self.fn()


def _whole(value, path, name):
    if type(value) is int or value is None:
        return      # its range: check_structure
    if isinstance(value, bool):
        raise _invalid_field(path, name, 'must be a whole number, got %r'
                             % value)
    if isinstance(value, float):
        if not value.is_integer():
            raise _invalid_field(path, name, 'must be a whole number, '
                                 'got %r' % value)
        number = int(value)
    elif isinstance(value, str):
        number = bounds.whole_number(value)
        if number is None:
            raise _invalid_field(path, name, 'must be a whole number, '
                                 'got %s' % exception.echo(value))
    else:
        return      # not a number at all: coercion says so
    if not bounds.in_int_range(number):
        raise _invalid_field(path, name, 'integer out of range (64 bits)')


def _finite(value, path, name):
    if type(value) in (int, float) or value is None:
        return      # finite: check_structure
    if isinstance(value, bool):
        raise _invalid_field(path, name, 'must be a number, got %r' % value)
    if isinstance(value, str) and bounds.finite_number(value) is None:
        try:
            float(value)
        except ValueError:
            raise _invalid_field(path, name, 'must be a number, got %s' %
                                 exception.echo(value))
        raise _invalid_field(path, name, 'not a finite number: %s' %
                             exception.echo(value))


def _boolean(value, path, name):
    if isinstance(value, bool) or value is None:
        return
    raise _invalid_field(path, name, 'must be true or false, got %s' %
                         exception.echo(value))


def _invalid_field(path, name, reason):
    return invalid('%s.%s' % (path, name), reason)


def check_field_values(values, checks, path):
    """Refuse the values of an object's fields that coercion would turn
    into something else (``_value_check``)."""
    for name in checks.keys() & values.keys():
        checks[name](values[name], path, name)


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


def _children(value, node, limits):
    """(key, child) pairs of a list, dict or object primitive; the keys
    of a dict are checked (strings, as scalars), an object's integer
    fields are whole numbers."""
    if isinstance(value, dict):
        for key in value:
            if type(key) is not str or len(key) > \
                    limits.max_string_length or not key.isascii():
                _check_scalar(key, node, limits)
        if _OBJ_NAME in value and isinstance(value.get(_OBJ_DATA), dict):
            data = value[_OBJ_DATA]
            where = lambda: _path(node)  # noqa: E731
            checks = _field_checks(value, where)
            if checks:
                check_field_values(data, checks, _Lazy(where))
            return [*data.items(),
                    *[(k, v) for k, v in value.items() if k != _OBJ_DATA]]
        for key in value:
            if not isinstance(key, str):
                raise invalid(_path(node), 'dict keys must be strings, '
                               'got %s' % type(key).__name__)
        return list(value.items())
    return list(enumerate(value))


class Limits:
    """The ``[limits]`` values one walk reads, read once: an oslo.config
    attribute costs more than checking the value it limits."""

    __slots__ = ('max_message_items', 'max_nesting_depth',
                 'max_list_length', 'max_string_length')

    def __eq__(self, other):
        return isinstance(other, Limits) and self.values() == other.values()

    __hash__ = None

    def __init__(self, limits):
        for name in self.__slots__:
            setattr(self, name, getattr(limits, name))

    def values(self):
        return tuple(getattr(self, name) for name in self.__slots__)

    def vouched_by(self, text_length):
        """Does a text of ``text_length`` characters hold at most
        ``max_message_items`` values? A JSON text of n values is at
        least 2n - 1 characters long (each value one, a separator or
        brackets between them); None: the text is not known."""
        return text_length is not None and \
            (text_length + 1) // 2 <= self.max_message_items

    @classmethod
    def of(cls, limits):
        """``limits`` read, unless it was already (one message's
        arguments share one reading)."""
        return limits if isinstance(limits, cls) else cls(limits)


def check_structure(value, path, limits, raw_object=None):
    """Check one RPC argument's shape and size (see module docstring),
    in one pass over it; a plain dict ``value`` holds the fields of
    object ``raw_object`` if given.

    Scalars are checked where their container is walked, and a node of
    the walk (``(parent node, key)``, for the error's path) is made for
    containers only: a valid message costs no object per value."""
    if raw_object and isinstance(value, dict) and _OBJ_NAME not in value:
        check_field_values(value, _field_checks(value, lambda: path,
                                                raw_object), path)
    limits = Limits.of(limits)
    max_items, max_depth, max_length = (limits.max_message_items,
                                        limits.max_nesting_depth,
                                        limits.max_list_length)
    root = (None, path)
    if not isinstance(value, _CONTAINERS):
        _check_scalar(value, root, limits)
        return
    pending = [(value, root, 1)]
    seen = 1
    while pending:
        item, node, depth = pending.pop()
        if depth > max_depth:
            raise invalid(_path(node), 'nested deeper than [limits] '
                           'max_nesting_depth (%d)' % max_depth)
        if len(item) > max_length:
            raise invalid(_path(node), '%d items, more than [limits] '
                           'max_list_length (%d)' % (len(item), max_length))
        # last first, as they are popped: the first problem found is the
        # one a walk child by child would find (the field an error names)
        for key, child in reversed(_children(item, node, limits)):
            seen += 1
            if isinstance(child, _CONTAINERS):
                pending.append((child, (node, key), depth + 1))
            elif type(child) not in _PLAIN or (
                    type(child) is str and (len(child) >
                                            limits.max_string_length
                                            or not child.isascii())):
                _check_scalar(child, (node, key), limits)
            elif type(child) is int and not (
                    bounds.in_int_range(child)):
                _check_scalar(child, (node, key), limits)
            elif type(child) is float and not math.isfinite(child):
                _check_scalar(child, (node, key), limits)
        if seen > max_items:
            raise invalid(path, 'more than [limits] max_message_items '
                           '(%d) values' % max_items)


_CONTAINERS = (dict, list, tuple)
#: scalars checked inline by ``check_structure`` (others, and strings
#: that need a closer look, go through ``_check_scalar``)
_PLAIN = frozenset((str, int, float, bool, type(None)))
