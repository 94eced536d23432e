"""The RPC edge's check: every argument, once, before the manager runs.

``EdgeCheck(limits)`` checks one message of a method at an RPC version,
in the order the dispatcher runs it, raising
``scheduler.exception.InvalidField`` that names the field
(``spec_obj.flavor.vcpus``, ``aggregates[0].uuid``,
``spec_obj.resource_groups[0].resources.X``) and what was wrong, with
the caller's value cut to a few hundred characters
(``scheduler.exception.echo``):

0. ``check_envelope(method, version, context, text_length)``: the
   method is a name, the version a version, and the context is within
   the ``[limits]`` (no invalid unicode ...: the bounds of step 1 in one
   pass of the validator, or ``check_structure`` as in step 2); what
   oslo.log writes of it into every line of the request
   (``LOGGED_CONTEXT``, ``roles``) follows the name rule
   (``scheduler.model.names``: no control character, 255 characters);
1. ``check_message(method, version, args, text_length)``, on the raw
   message before anything is decoded: an argument the method does not
   take is refused by name; then each argument is checked, in one pass
   of a maintained validator, ``jsonschema_rs``
   (doc/source/decisions/validator.rst), against the method's JSON
   Schema for that version (``scheduler.edge.schemas``) and the
   ``[limits]`` (``scheduler.edge.schemas.bounds``, which the schema
   holds at every node): nesting depth, list and string lengths,
   non-finite or out-of-range numbers, strings that are not valid
   unicode, and values of a scheduler object's fields that
   oslo.versionedobjects would coerce into something else (a fractional
   or string number truncated or parsed for an integer field, a string
   that is no finite number for a float field, anything but a boolean
   for a boolean field, as ``bool('false')`` is True; the values of a
   dict of such; a plain dict the method's schema module lists in
   ``RAW_OBJECTS`` counts as that object). The total number of values is
   bounded by ``text_length``, the length of the JSON text the message
   was read from, which the transport states only for a text holding no
   surrogate (``scheduler.transport.wire.text_length``): no string of
   the message is then invalid unicode. An object primitive's data
   is checked as the object's fields (``scheduler.edge.schemas.wire``),
   which are the fields its sender set (a report leaving out its
   capacity is refused, not read as zero), the project's string
   keywords are the validator's formats, and its value keywords
   (``scheduler.edge.schemas.keywords``) run once the schema passed, on
   the few values they name;
2. only if that pass refuses the message, or cannot vouch for it (no
   ``text_length``, or a text long enough to hold more values than
   ``max_message_items``), the limits' own walk, ``check_structure``,
   runs on each argument (iteratively: no message can raise a
   RecursionError), then the schema alone: the walk names the field
   and the limit, or counts the values, and the schema words its own
   refusals, so every message is refused as the walk and the schema
   refuse it. A nova RequestSpec's fields are nova's: its schema waits
   for step 4 (the limits do not), and ``check_message`` returns the
   names of such arguments;
3. the dispatcher deserializes the arguments and reads them into what the
   manager takes (``scheduler.edge.arguments``);
4. ``check_arguments(method, version, args, names)`` applies the schema
   to the read arguments ``names`` (all of them by default: the objects
   an in-process caller hands over), on their primitives.

``limits`` is the ``[limits]`` option group (``conf.limits``) or any object
with the same attributes, read at each message (the schemas holding them
are built anew when a value changed). ``order_stamp`` orders casts by
their send time.
"""

import functools
import json
import math
import re

import jsonschema_rs
from oslo_versionedobjects import fields as ovo_fields

from scheduler import exception
from scheduler.model import names
from scheduler.objects import base
from scheduler.objects import nova_compat
from scheduler.edge import schemas
from scheduler.edge.schemas import bounds
from scheduler.edge.schemas import errors as schema_errors
from scheduler.edge.schemas import keywords
from scheduler.edge.schemas import wire

_OBJ_NAME = 'scheduler_object.name'
_OBJ_DATA = 'scheduler_object.data'
# Values stored in BIGINT columns and numpy int64 columns.
_INT_RANGE = (-2 ** 63, 2 ** 63 - 1)


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


#: an RPC version as oslo.messaging compares them
_VERSION = re.compile(r'[0-9]{1,9}\.[0-9]{1,9}(\.[0-9]{1,9})?')
#: what oslo.log writes of a request's context into every line of it
LOGGED_CONTEXT = ('user', 'user_id', 'tenant', 'project_id', 'domain',
                  'user_domain', 'project_domain', 'user_name',
                  'project_name', 'request_id', 'global_request_id',
                  'resource_uuid')


def _logged_context_problem(ctxt):
    """(field, reason) of the first value of ``ctxt`` that oslo.log
    would write but that is not a name, or None."""
    for key in LOGGED_CONTEXT:
        value = ctxt.get(key)
        if value not in (None, ''):
            problem = names.name_problem(value)
            if problem:
                return 'context.%s' % key, problem
    roles = ctxt.get('roles')
    if roles is not None and not isinstance(roles, list):
        return 'context.roles', 'expected a list of role names'
    for index, role in enumerate(roles or ()):
        problem = names.name_problem(role)
        if problem:
            return 'context.roles[%d]' % index, problem
    return None


def _field_checks(primitive, where, name=None):
    """``{field: check(value, path, name)}`` of the object ``primitive``
    encodes (or, for a plain dict, of object ``name``): ``_value_check``
    of each field whose type has one. An object name that is not a
    string is refused here (``where()``: the primitive's path)."""
    name = name or primitive.get(_OBJ_NAME)
    if not isinstance(name, str):
        raise _invalid('%s.%s' % (where(), _OBJ_NAME), 'expected the name '
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
        try:
            number = int(value)
        except ValueError:
            raise _invalid_field(path, name, 'must be a whole number, '
                                 'got %s' % exception.echo(value))
    else:
        return      # not a number at all: coercion says so
    if not _INT_RANGE[0] <= number <= _INT_RANGE[1]:
        raise _invalid_field(path, name, 'integer out of range (64 bits)')


def _finite(value, path, name):
    if type(value) in (int, float) or value is None:
        return      # finite: check_structure
    if isinstance(value, bool):
        raise _invalid_field(path, name, 'must be a number, got %r' % value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            raise _invalid_field(path, name, 'must be a number, got %s' %
                                 exception.echo(value))
        if not math.isfinite(number):
            raise _invalid_field(path, name, 'not a finite number: %s' %
                                 exception.echo(value))


def _boolean(value, path, name):
    if isinstance(value, bool) or value is None:
        return
    raise _invalid_field(path, name, 'must be true or false, got %s' %
                         exception.echo(value))


def _invalid_field(path, name, reason):
    return _invalid('%s.%s' % (path, name), reason)


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
                raise _invalid(_path(node), 'dict keys must be strings, '
                               'got %s' % type(key).__name__)
        return list(value.items())
    return list(enumerate(value))


class _Limits:
    """The ``[limits]`` values one walk reads, read once: an oslo.config
    attribute costs more than checking the value it limits."""

    __slots__ = ('max_message_items', 'max_nesting_depth',
                 'max_list_length', 'max_string_length')

    def __eq__(self, other):
        return isinstance(other, _Limits) and self.values() == other.values()

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
    limits = _Limits.of(limits)
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
            raise _invalid(_path(node), 'nested deeper than [limits] '
                           'max_nesting_depth (%d)' % max_depth)
        if len(item) > max_length:
            raise _invalid(_path(node), '%d items, more than [limits] '
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
                    _INT_RANGE[0] <= child <= _INT_RANGE[1]):
                _check_scalar(child, (node, key), limits)
            elif type(child) is float and not math.isfinite(child):
                _check_scalar(child, (node, key), limits)
        if seen > max_items:
            raise _invalid(path, 'more than [limits] max_message_items '
                           '(%d) values' % max_items)


_CONTAINERS = (dict, list, tuple)
#: scalars checked inline by ``check_structure`` (others, and strings
#: that need a closer look, go through ``_check_scalar``)
_PLAIN = frozenset((str, int, float, bool, type(None)))


def _primitive(value):
    """A read argument as it travels: objects as their primitives."""
    if isinstance(value, base.SchedulerObject):
        return value.obj_to_primitive()
    if isinstance(value, (list, tuple)):
        return [_primitive(item) for item in value]
    return value


def _as_lists(args, names):
    """``args`` with the one object of each of ``names`` as a list of
    one, as reading it makes it (errors name ``aggregates[0].uuid``)."""
    single = {name: [args[name]] for name in names
              if name in args and not isinstance(args[name], (list, tuple))}
    return dict(args, **single) if single else args


def _jsonable(value):
    """``value`` with what no JSON holds (a datetime an in-process caller
    put in a dict ...) as text, for the validator, which takes JSON's
    types only; never needed for a message off the wire."""
    return json.loads(json.dumps(value, default=str))


class _SchemaCheck:
    """One method's schema at one version, as ``jsonschema_rs`` runs it
    (``scheduler.edge.schemas.wire``), for the arguments ``names`` only
    (None: all of them); ``within_limits`` runs it with the ``[limits]``
    of ``limits`` (a ``_Limits``) on every argument
    (``scheduler.edge.schemas.bounds``; ``raw``: ``raw_objects``)."""

    def __init__(self, schema, names, rules, limits, raw):
        if names is not None:
            schema = dict(schema, required=[
                name for name in schema.get('required', ()) if name in names],
                properties={name: sub if name in names else True
                            for name, sub in schema['properties'].items()})
        self.wire = wire.derive(schema)
        self.accepted = list(schema['properties'])
        self.rules = rules
        self._argument_rules = [
            (name, found) for name, found in wire.rules_by_argument(
                self.wire.rules).items()]
        self._validator = jsonschema_rs.Draft202012Validator(
            self.wire.schema, formats=_FORMATS, validate_formats=True)
        self._limits, self._raw = limits, raw
        self._bounded = None

    def within_limits(self, args):
        """Do the raw ``args`` pass the schema and the ``[limits]`` in
        one pass? False may also mean that the pass cannot tell (a lone
        surrogate, a key that is no string: ``ValueError``)."""
        if self._bounded is None:   # built when first needed
            self._bounded = _bounded(self.wire.schema, self._limits,
                                     self._raw)
        return _passes(self._bounded, args)

    def __call__(self, args):
        """Raise InvalidField for the first problem of ``args``: the
        validator's one walk, then the value rules on the values they
        name (``wire.run_rules``)."""
        try:
            valid = self._validator.is_valid(args)
        except ValueError:
            args = _jsonable(args)
            valid = self._validator.is_valid(args)
        if not valid:
            raise self._first_error(args)
        self.run_rules(args)

    def run_rules(self, args):
        """Raise InvalidField for the first value rule ``args`` break
        (``args`` passed the schema)."""
        for name, rules in self._argument_rules:
            if name in args:
                found = wire.run_rules(rules, self.rules, name, args[name])
                if found is not None:
                    raise _rule_error(*found)

    def _first_error(self, args):
        """The error of the first argument (in the schema's order) that
        has one: the one a reader of the message meets first."""
        order = {name: index for index, name in enumerate(self.accepted)}
        error = min(self._validator.iter_errors(args), default=None,
                    key=lambda e: order.get(
                        e.instance_path[0] if e.instance_path else None, -1))
        if error is None:   # is_valid and iter_errors disagree: a bug
            return _invalid('args', 'refused by the schema')
        return schema_errors.invalid_field(error, self.wire.schema)


#: validators of the bounded schemas, by the schema and the limits'
#: values: built once per process (a few hundredths of a second each)
_BOUNDED = {}


def _bounded(schema, limits, raw=None):
    """The validator of ``bounds.bounded(schema, limits, raw)``; schema
    None: of ``bounds.value_bounds(limits)``."""
    key = (json.dumps(schema, sort_keys=True), limits.values(),
           tuple(sorted((raw or {}).items())))
    validator = _BOUNDED.get(key)
    if validator is None:
        validator = _BOUNDED.setdefault(
            key, jsonschema_rs.Draft202012Validator(
                bounds.value_bounds(limits) if schema is None else
                bounds.bounded(schema, limits, raw), formats=_FORMATS,
                validate_formats=True))
    return validator


def _passes(validator, value):
    """Does ``value`` pass ``validator``? False also when it cannot tell
    (a lone surrogate, a key that is no string: ``ValueError``)."""
    try:
        return validator.is_valid(value)
    except ValueError:
        return False


def _rule_error(path, problem):
    if problem.field:
        return _invalid(problem.field, problem.reason)
    return _invalid(schema_errors.field_name(path + tuple(problem.path)),
                    problem.reason)


#: format -> predicate, for the validator (``keywords.FORMATS`` word them)
_FORMATS = dict({name: (lambda reason: lambda value: reason(value) is None)(
    reason) for name, reason in keywords.FORMATS.items()}, **bounds.FORMATS)
#: (method, version) pairs whose schema ``EdgeCheck`` keeps at hand
_MAX_CHOSEN = 256


class EdgeCheck:
    """See the module docstring: the checks of one worker's messages."""

    def __init__(self, limits):
        self.limits = limits
        self._rules = keywords.build(limits)
        self._read = _Limits(limits)
        self._checks = {}
        self._chosen = {}
        # built now: a schema the validator cannot take fails at start-up
        for method in schemas.METHODS:
            for version in schemas.versions(method):
                self._check(method, version)

    def _limits(self):
        """The ``[limits]`` now; the schemas are built anew when they
        changed (the bounds hold the values they were built with)."""
        read = _Limits(self.limits)
        if read != self._read:
            self._read = read
            self._checks.clear()
            self._chosen.clear()
        return read

    def _check(self, method, version, names=None):
        """The ``_SchemaCheck`` of ``method`` at ``version`` for
        ``names``, built once per schema."""
        key = (method, version, names)
        try:
            return self._chosen[key]
        except KeyError:
            pass
        schema = schemas.schema_for(method, version)
        raw = schemas.raw_objects(method)
        built_key = (id(schema), names, tuple(sorted(raw.items())))
        check = self._checks.get(built_key)
        if check is None:
            check = self._checks.setdefault(built_key, _SchemaCheck(
                schema, names, self._rules, self._read, raw))
        if len(self._chosen) >= _MAX_CHOSEN:
            self._chosen.clear()    # many spellings of versions
        return self._chosen.setdefault(key, check)

    def accepted(self, method, version):
        """The arguments ``method`` takes, in order."""
        return list(self._check(method, version).accepted)

    def check_envelope(self, method, version, ctxt, text_length=None):
        """Step 0 (module doc): the method name, the version, the
        context of a message (``text_length``: as ``check_message``)."""
        if not isinstance(method, str) or not method:
            raise _invalid('method', 'expected a method name, got %s' %
                           exception.echo(method))
        if not (isinstance(version, str) and _VERSION.fullmatch(version)):
            raise _invalid('version', 'expected a version such as 1.3, '
                           'got %s' % exception.echo(version))
        if not isinstance(ctxt, dict):
            raise _invalid('context', 'expected a dict, got %s' %
                           type(ctxt).__name__)
        limits = self._limits()
        if not (limits.vouched_by(text_length) and
                _passes(_bounded(None, limits), ctxt)):
            check_structure(ctxt, 'context', limits)
        problem = _logged_context_problem(ctxt)
        if problem:
            raise _invalid(*problem)

    def check_message(self, method, version, args, text_length=None):
        """Steps 1 and 2 (module doc), on the raw arguments. Returns the
        names of the arguments whose schema applies once they are read
        (``check_arguments``): a nova RequestSpec, whose fields are
        not this scheduler's. ``text_length``: the characters of the
        JSON text the message was read from, if known (the transport
        knows it); a text short enough holds no more values than
        ``[limits] max_message_items`` allows."""
        if not isinstance(args, dict):
            raise _invalid('args', 'expected a dict')
        limits = self._limits()
        whole = self._check(method, version)
        for name in args:
            if name not in whole.accepted:
                raise _invalid(name, 'unknown argument (accepted: %s)' %
                               ', '.join(whole.accepted))
        read_first = frozenset(name for name, value in args.items()
                               if nova_compat.is_nova_request_spec(value))
        check = self._check(method, version, frozenset(
            whole.accepted) - read_first) if read_first else whole
        listed = _as_lists(args, schemas.one_or_list(method))
        if limits.vouched_by(text_length) and check.within_limits(listed):
            check.run_rules(listed)     # the one walk passed
            return read_first
        # refused, or not known to be short enough: the walk of the
        # limits names the field (or counts the values), then the schema
        raw = schemas.raw_objects(method)
        for name, value in args.items():
            check_structure(value, name, limits, raw.get(name))
        check(listed)
        return read_first

    def check_arguments(self, method, version, args, names=None):
        """Step 4 (module doc): the read arguments ``names`` (a set;
        None: all, as an in-process caller hands them over) against the
        schema, on their primitives."""
        if names is not None and not names:
            return
        names = None if names is None else frozenset(names)
        self._check(method, version, names)({
            name: _primitive(value) for name, value in args.items()
            if names is None or name in names})


def order_stamp(ctxt):
    """When the caller sent this message (its clock), for ordering casts;
    None from an old client that sends none. The database layer orders
    a missing stamp, or one ahead of the worker's clock, as the worker's
    now (``scheduler.db.send_order.clamp``: doc/source/ordering.rst)."""
    return getattr(ctxt, 'sent_at', None)
