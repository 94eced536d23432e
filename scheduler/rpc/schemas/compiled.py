"""The schemas as fast predicates: valid or not, nothing more.

``jsonschema`` builds a validator per subschema it descends into and
formats every error it finds; most messages are valid, and for them that
is most of the edge check's CPU. ``Compiler(keyword_functions).compile(
schema)`` turns a schema into a tree of plain closures answering only
whether a value is valid, with the semantics of JSON Schema draft 2020-12
as ``scheduler.rpc.validation`` extends it:

* ``type``: ``integer`` and ``number`` never accept a bool, ``integer``
  accepts a float without a fractional part (draft 6 and later),
  ``array`` is a list or a tuple, ``object`` a dict;
* every other keyword applies only to the types it is about
  (``minimum`` to numbers, ``pattern`` to strings, ``properties`` to
  objects, ``items`` to arrays ...);
* a project keyword (``scheduler.rpc.schemas.keywords``) is the very
  function jsonschema runs, called with a small stand-in validator: the
  value is valid when it yields nothing.

Only the keywords the project's schemas use are known (``SUPPORTED``,
plus the project keywords given and annotations: ``x-...``, ``title``,
``description``, ``$comment``); any other makes ``compile`` raise
``UnsupportedSchema``, so a schema edit cannot silently skip a rule here.
The error, when there is one, is still jsonschema's to find and word:
``validation.EdgeCheck`` runs it only when the predicate says invalid.

With ``objects`` (``Objects``), a predicate takes the arguments as read,
before ``view``: a scheduler object counts as the mapping of its set
fields, read only where the schema looks, and ``view`` runs only for the
parts a value-level keyword (a project keyword, ``enum``, ``const``,
``format``) needs whole. Its answer is the one of the predicate on the
value's ``view``.

>>> check = Compiler({}).compile({'type': 'object', 'required': ['a'],
...                               'properties': {'a': {'minimum': 1}}})
>>> check({'a': 2}), check({'a': 0}), check({}), check({'a': 'x'})
(True, False, False, True)
"""

import collections
import numbers
import re

from jsonschema import exceptions as js_exceptions

#: keywords this compiler knows (besides the project's and annotations)
SUPPORTED = frozenset((
    'type', 'enum', 'const', 'format',
    'properties', 'required', 'additionalProperties',
    'items', 'minItems', 'maxItems',
    'minLength', 'maxLength', 'pattern',
    'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
    'anyOf', 'allOf', 'oneOf', 'not',
))
_ANNOTATIONS = frozenset(('title', 'description', '$comment'))
_OBJECT_KEYWORDS = ('properties', 'required', 'additionalProperties')
_ARRAY_KEYWORDS = ('items', 'minItems', 'maxItems')
_STRING_KEYWORDS = ('minLength', 'maxLength', 'pattern')
_NUMBER_KEYWORDS = ('minimum', 'maximum', 'exclusiveMinimum',
                    'exclusiveMaximum')
#: keyword -> the method checking it with the others of its group
_GROUPS = dict(
    [(key, '_object') for key in _OBJECT_KEYWORDS]
    + [(key, '_array') for key in _ARRAY_KEYWORDS]
    + [(key, '_string') for key in _STRING_KEYWORDS]
    + [(key, '_number') for key in _NUMBER_KEYWORDS])
_MISSING = object()
_ARRAYS = (list, tuple)
_NOT_OBJECTS = (list, tuple, str, bool, numbers.Number, type(None))

#: How a predicate reads arguments before ``view``: ``record`` is the
#: object class read as a mapping, ``get(obj, name, missing)`` a set
#: field's value (else ``missing``), ``items(obj)`` the (name, value)
#: pairs of its set fields, ``view(value)`` the value as the schema sees
#: it (``validation.view``).
Objects = collections.namedtuple('Objects', 'record get items view')


class UnsupportedSchema(ValueError):
    """A schema says something ``Compiler`` cannot check."""


def _valid(value):
    return True


def _invalid(value):
    return False


def _is_integer(value):
    if isinstance(value, int):
        return not isinstance(value, bool)
    return isinstance(value, float) and value.is_integer()


def _is_number(value):
    if type(value) in (int, float):
        return True
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


#: plain type name -> predicate (array: list or tuple)
TYPES = {
    'array': lambda value: isinstance(value, _ARRAYS),
    'boolean': lambda value: isinstance(value, bool),
    'integer': _is_integer,
    'null': lambda value: value is None,
    'number': _is_number,
    'object': lambda value: isinstance(value, dict),
    'string': lambda value: isinstance(value, str),
}


def _unbool(value, true=object(), false=object()):
    """jsonschema's: True and 1 (False and 0) are not equal."""
    if value is True:
        return true
    if value is False:
        return false
    return value


def _scalar(value):
    return value is None or isinstance(value, (str, bool, int, float))


def _equal_scalar(each, value):
    """jsonschema's ``equal(each, value)`` for a scalar ``each``."""
    if each is value:
        return True
    if isinstance(each, str) or isinstance(value, str):
        return each == value
    return _unbool(each) == _unbool(value)


def _all(checks):
    """One predicate: every one of ``checks``, in order."""
    checks = tuple(checks)
    if not checks:
        return _valid
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    if len(checks) == 3:
        first, second, third = checks
        return lambda value: first(value) and second(value) and \
            third(value)

    def every(value):
        for check in checks:
            if not check(value):
                return False
        return True
    return every


class _StandIn:
    """The validator a project keyword function is given: enough of
    jsonschema's for a keyword that asks a type or descends (none does
    today). Anything else raises AttributeError, so the predicate raises
    and ``EdgeCheck`` asks jsonschema."""

    def __init__(self, compiler):
        self._compiler = compiler

    def is_type(self, instance, type):
        try:
            return TYPES[type](instance)
        except KeyError:
            raise js_exceptions.UnknownType(type, instance, None) from None

    def descend(self, instance, schema, path=None, schema_path=None,
                resolver=None):
        if not self._compiler.compile(schema, plain=True)(instance):
            yield js_exceptions.ValidationError('invalid')


class Compiler:
    """Compiles schemas into predicates (module docstring), sharing the
    predicate of a fragment several schemas hold.

    ``keyword_functions`` is ``{keyword: function}``
    (``keywords.build(limits)``), ``formats`` ``{format: function}``
    answering whether a value is of it, ``objects`` an ``Objects`` when
    predicates take values before ``view``."""

    def __init__(self, keyword_functions, formats=None, objects=None):
        self.keyword_functions = dict(keyword_functions)
        self.formats = dict(formats or {})
        self.objects = objects
        self._stand_in = _StandIn(self)
        self._built = {}
        self._keep = []

    def compile(self, schema, plain=False):
        """The predicate of ``schema``: ``predicate(value) -> bool``;
        ``plain``: of values already viewed (always so without
        ``objects``). Raises UnsupportedSchema."""
        raw = self.objects is not None and not plain
        key = (id(schema), raw)
        try:
            return self._built[key]
        except KeyError:
            pass
        predicate = self._build(schema, raw)
        self._built[key] = predicate
        self._keep.append(schema)   # its id stays its own
        return predicate

    def _sub(self, schema, raw):
        return self.compile(schema, plain=not raw)

    def _build(self, schema, raw):
        if schema is True:
            return _valid
        if schema is False:
            return _invalid
        if not isinstance(schema, dict):
            raise UnsupportedSchema('not a schema: %r' % (schema,))
        unknown = sorted(
            key for key in schema
            if key not in SUPPORTED and key not in self.keyword_functions
            and key not in _ANNOTATIONS
            and not (isinstance(key, str) and key.startswith('x-')))
        if unknown:
            raise UnsupportedSchema('unsupported keyword(s) %s in %r' % (
                ', '.join(map(repr, unknown)), schema))
        if raw and any(key in self.keyword_functions or key in (
                'enum', 'const', 'format') for key in schema):
            return self._viewing(self.compile(schema, plain=True))
        checks = []
        groups = set()
        for key in schema:
            group = _GROUPS.get(key)
            if group is not None:
                if group not in groups:
                    groups.add(group)
                    checks.append(getattr(self, group)(schema, raw))
            elif key == 'type':
                checks.append(self._type(schema['type'], raw))
            elif key in ('anyOf', 'allOf', 'oneOf', 'not'):
                checks.append(self._combined(key, schema[key], raw))
            elif key in ('enum', 'const'):
                checks.append(self._enum(key, schema[key]))
            elif key == 'format':
                checks.append(self._format(schema[key]))
            elif key in self.keyword_functions:
                checks.append(self._keyword(key, schema))
        return _all(checks)

    def _viewing(self, plain):
        """Raw mode of a schema with value-level keywords: the plain
        predicate on the value's view (a scalar is its own)."""
        objects = self.objects
        record, view = objects.record, objects.view
        containers = (record, dict, list, tuple)

        def viewing(value):
            if isinstance(value, containers):
                value = view(value)
            return plain(value)
        return viewing

    def _type(self, names, raw):
        names = names if isinstance(names, list) else [names]
        for name in names:
            if name not in TYPES:
                raise UnsupportedSchema('unknown type %r' % (name,))
        record = self.objects.record if raw else None
        if record is not None and 'object' in names:
            plain = _any_type([n for n in names if n != 'object'])
            if plain is _invalid:
                return lambda value: isinstance(value, (dict, record))
            return lambda value: isinstance(value, (dict, record)) or \
                plain(value)
        plain = _any_type(names)
        if record is not None and issubclass(record, _NOT_OBJECTS):
            # a record is viewed as an object, never as anything else
            return lambda value: plain(value) and \
                not isinstance(value, record)
        return plain

    def _object(self, schema, raw):
        required = tuple(schema.get('required', ()))
        if not all(isinstance(name, str) for name in required):
            raise UnsupportedSchema('required names must be strings')
        declared = schema.get('properties', {})
        if not isinstance(declared, dict):
            raise UnsupportedSchema('properties must be a dict')
        properties = tuple((name, self._sub(sub, raw))
                           for name, sub in declared.items())
        extra = self._schema_or_bool(
            schema.get('additionalProperties', True), raw,
            'additionalProperties')
        names = frozenset(declared)
        record = self.objects.record if raw else None
        if record is not None:
            get, items = self.objects.get, self.objects.items
        missing = _MISSING

        def fields_valid(value, get, pairs):
            """The object keywords over ``value``'s fields, read with
            ``get(value, name, missing)`` and ``pairs(value)``."""
            for name in required:
                if get(value, name, missing) is missing:
                    return False
            for name, sub in properties:
                item = get(value, name, missing)
                if item is not missing and not sub(item):
                    return False
            if extra is not None:
                for name, item in pairs(value):
                    if name not in names and not extra(item):
                        return False
            return True

        def check(value):
            if isinstance(value, dict):
                return fields_valid(value, dict.get, dict.items)
            if record is None or not isinstance(value, record):
                return True
            return fields_valid(value, get, items)
        return check

    def _schema_or_bool(self, value, raw, keyword):
        """A keyword whose value is a schema or a boolean: its predicate,
        None for ``true`` (anything goes) or ``_invalid`` for ``false``."""
        if isinstance(value, dict):
            return self._sub(value, raw)
        if value is True:
            return None
        if value is False:
            return _invalid
        raise UnsupportedSchema('%s %r' % (keyword, value))

    def _array(self, schema, raw):
        item = self._schema_or_bool(schema.get('items', True), raw,
                                    'items (a tuple of schemas is '
                                    'prefixItems)')
        low = _count(schema, 'minItems')
        high = _count(schema, 'maxItems')
        record = self.objects.record if raw else None

        def check(value):
            if not isinstance(value, _ARRAYS) or (
                    record is not None and isinstance(value, record)):
                return True
            if low is not None and len(value) < low:
                return False
            if high is not None and len(value) > high:
                return False
            if item is not None:
                for element in value:
                    if not item(element):
                        return False
            return True
        return check

    def _string(self, schema, raw):
        low = _count(schema, 'minLength')
        high = _count(schema, 'maxLength')
        search = None
        if 'pattern' in schema:
            if not isinstance(schema['pattern'], str):
                raise UnsupportedSchema('pattern must be a string')
            search = re.compile(schema['pattern']).search

        def check(value):
            if not isinstance(value, str):
                return True
            if low is not None and len(value) < low:
                return False
            if high is not None and len(value) > high:
                return False
            return search is None or search(value) is not None
        return check

    def _number(self, schema, raw):
        bounds = []
        for key in _NUMBER_KEYWORDS:
            if key in schema:
                if not _is_number(schema[key]):
                    raise UnsupportedSchema('%s must be a number' % key)
                bounds.append((key, schema[key]))
        tests = tuple(_BOUNDS[key](bound) for key, bound in bounds)
        test = _all(tests)

        def check(value):
            return not _is_number(value) or test(value)
        return check

    def _combined(self, key, value, raw):
        if key == 'not':
            sub = self._sub(value, raw)
            return lambda instance: not sub(instance)
        if not isinstance(value, list) or not value:
            raise UnsupportedSchema('%s needs a non-empty list' % key)
        subs = tuple(self._sub(schema, raw) for schema in value)
        if key == 'allOf':
            return _all(subs)
        if key == 'anyOf':
            def any_of(instance):
                for sub in subs:
                    if sub(instance):
                        return True
                return False
            return any_of

        def one_of(instance):
            return sum(1 for sub in subs if sub(instance)) == 1
        return one_of

    def _enum(self, key, value):
        values = [value] if key == 'const' else value
        if key == 'enum' and not isinstance(values, list):
            raise UnsupportedSchema('enum needs a list')
        if not all(_scalar(each) for each in values):
            raise UnsupportedSchema('%s of non-scalar values' % key)
        values = tuple(values)
        if all(isinstance(each, str) for each in values):
            # each == value, as jsonschema compares a string
            return lambda instance: instance in values
        return lambda instance: any(_equal_scalar(each, instance)
                                    for each in values)

    def _format(self, name):
        try:
            test = self.formats[name]
        except (KeyError, TypeError):
            raise UnsupportedSchema('unknown format %r' % (name,)) from None
        return lambda value: bool(test(value))

    def _keyword(self, key, schema):
        function = self.keyword_functions[key]
        value = schema[key]
        stand_in = self._stand_in

        def keyword(instance):
            errors = function(stand_in, value, instance, schema)
            if errors is None:
                return True
            for _error in errors:
                return False
            return True
        return keyword


#: bound keyword -> (bound -> test of a number), as jsonschema words
#: each: ``not value < bound`` is not ``value >= bound`` for a NaN
_BOUNDS = {
    'minimum': lambda bound: lambda value: not value < bound,
    'maximum': lambda bound: lambda value: not value > bound,
    'exclusiveMinimum': lambda bound: lambda value: not value <= bound,
    'exclusiveMaximum': lambda bound: lambda value: not value >= bound,
}


def _any_type(names):
    tests = tuple(TYPES[name] for name in names)
    if not tests:
        return _invalid
    if len(tests) == 1:
        return tests[0]

    def any_type(value):
        for test in tests:
            if test(value):
                return True
        return False
    return any_type


def _count(schema, key):
    if key not in schema:
        return None
    value = schema[key]
    if not _is_integer(value) or value < 0:
        raise UnsupportedSchema('%s must be a non-negative integer' % key)
    return value
