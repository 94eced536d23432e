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
   pass of the validator, or ``walk.check_structure`` as in step 2); what
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
   ``max_message_items``), the limits' own walk, ``walk.check_structure``,
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

import json
import re

import jsonschema_rs

from scheduler import exception
from scheduler.model import names
from scheduler.objects import base
from scheduler.objects import nova_compat
from scheduler.edge import schemas
from scheduler.edge import walk
from scheduler.edge.schemas import bounds
from scheduler.edge.schemas import errors as schema_errors
from scheduler.edge.schemas import keywords
from scheduler.edge.schemas import wire

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
    of ``limits`` (a ``walk.Limits``) on every argument
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
            return walk.invalid('args', 'refused by the schema')
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
        return walk.invalid(problem.field, problem.reason)
    return walk.invalid(schema_errors.field_name(path + tuple(problem.path)),
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
        self._read = walk.Limits(limits)
        self._checks = {}
        self._chosen = {}
        # built now: a schema the validator cannot take fails at start-up
        for method in schemas.METHODS:
            for version in schemas.versions(method):
                self._check(method, version)

    def _limits(self):
        """The ``[limits]`` now; the schemas are built anew when they
        changed (the bounds hold the values they were built with)."""
        read = walk.Limits(self.limits)
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
            raise walk.invalid('method', 'expected a method name, got %s' %
                           exception.echo(method))
        if not (isinstance(version, str) and _VERSION.fullmatch(version)):
            raise walk.invalid('version', 'expected a version such as 1.3, '
                           'got %s' % exception.echo(version))
        if not isinstance(ctxt, dict):
            raise walk.invalid('context', 'expected a dict, got %s' %
                           type(ctxt).__name__)
        limits = self._limits()
        if not (limits.vouched_by(text_length) and
                _passes(_bounded(None, limits), ctxt)):
            walk.check_structure(ctxt, 'context', limits)
        problem = _logged_context_problem(ctxt)
        if problem:
            raise walk.invalid(*problem)

    def check_message(self, method, version, args, text_length=None):
        """Steps 1 and 2 (module doc), on the raw arguments. Returns the
        names of the arguments whose schema applies once they are read
        (``check_arguments``): a nova RequestSpec, whose fields are
        not this scheduler's. ``text_length``: the characters of the
        JSON text the message was read from, if known (the transport
        knows it); a text short enough holds no more values than
        ``[limits] max_message_items`` allows."""
        if not isinstance(args, dict):
            raise walk.invalid('args', 'expected a dict')
        limits = self._limits()
        whole = self._check(method, version)
        for name in args:
            if name not in whole.accepted:
                raise walk.invalid(name, 'unknown argument (accepted: %s)' %
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
            walk.check_structure(value, name, limits, raw.get(name))
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
