"""The schemas as the validator runs them: on the message as it arrives.

The schemas of ``scheduler.edge.schemas`` say what each argument holds,
field by field; an object arrives as oslo.versionedobjects' primitive,
``{'scheduler_object.name': ..., 'scheduler_object.data': {field:
value}}`` (nova's: ``nova_object.``), whose data holds exactly the fields
the sender set. ``derive(schema)`` returns a ``Wire``:

* ``schema``: the same schema for the primitive: each object schema
  applies to a mapping as it is, or to the data of an object primitive
  (``if``/``then``/``else``, so an error inside still names its field);
  the project's string keywords become formats and its key keywords
  ``propertyNames`` of a format (``keywords``); an object schema naming
  ``x-object`` takes that object's primitive only (a plain mapping is
  refused);
* ``rules``: ``(where, keyword, value)`` of the project's value
  keywords, run by ``run_rules`` once the schema has passed (grouped by
  argument: ``rules_by_argument``): ``where`` is the path of the value it
  judges, ``'*'`` standing for each item of a list or each value of a
  mapping. A value keyword inside ``anyOf``,
  ``oneOf``, ``not``, ``then`` or ``else`` (which branch holds is not
  known after the fact) raises ``ValueError`` here, at start-up.

``Fields(data)`` is an object primitive's data (or a mapping) as the
model's rules read a request: a dict whose items are also attributes,
with each nested object primitive seen as its data, as it is read
(no copy of the message is made beforehand).

>>> derive({'type': 'object', 'properties': {'n': {'name': True}},
...         'claimsSomething': True}).rules
[((), 'claimsSomething', True)]
"""

import collections

from scheduler.edge.schemas import keywords

#: where an object primitive keeps its fields (ours, then nova's)
DATA_KEYS = ('scheduler_object.data', 'nova_object.data')
#: where one of ours keeps its object's name
NAME_KEY = 'scheduler_object.name'
#: an error's path step that is no field (dropped when naming it)
ENVELOPE_STEPS = frozenset(DATA_KEYS + (NAME_KEY,))
_RULES = frozenset(keywords.build(None))
_BRANCHES = ('anyOf', 'oneOf')
#: keywords holding one schema that may or may not apply
_CONDITIONAL = ('not', 'then', 'else')

Wire = collections.namedtuple('Wire', 'schema rules')


def derive(schema):
    """The ``Wire`` of a schema of ``scheduler.edge.schemas``."""
    rules = []
    return Wire(_derive(schema, (), rules, False), rules)


def _derive(node, where, rules, branch):
    if not isinstance(node, dict):
        return node
    out, formats = {}, []
    for key, value in node.items():
        if key in keywords.STRING_KEYWORDS:
            if value:
                formats.append(keywords.STRING_KEYWORDS[key])
        elif key in keywords.KEY_KEYWORDS:
            if value:
                out['propertyNames'] = {
                    'format': keywords.KEY_KEYWORDS[key]}
        elif key in _RULES:
            if branch:
                raise ValueError('value keyword %s in a branch (anyOf, '
                                 'oneOf, not, then, else) at %s' % (
                                     key, '.'.join(map(str, where))))
            if value:
                rules.append((where, key, value))
        elif key == 'properties':
            out[key] = {name: _derive(sub, where + (name,), rules, branch)
                        for name, sub in value.items()}
        elif key in ('items', 'additionalProperties'):
            out[key] = _derive(value, where + ('*',), rules, branch)
        elif key in _BRANCHES:
            out[key] = [_derive(sub, where, rules, True) for sub in value]
        elif key in _CONDITIONAL:
            out[key] = _derive(value, where, rules, True)
        elif key == 'format':
            formats.insert(0, value)
        else:
            out[key] = value
    _add_formats(out, formats)
    return _enveloped(out) if _of_objects(out) else out


def _add_formats(schema, formats):
    """A string keyword checks strings: a value of another type (which
    reading would turn into a string) is refused."""
    if not formats:
        return
    schema.setdefault('type', 'string')
    schema['format'] = formats[0]
    if len(formats) > 1:
        schema['allOf'] = [{'format': name} for name in formats[1:]]


def _of_objects(schema):
    types = schema.get('type')
    types = types if isinstance(types, list) else [types]
    return 'object' in types or (
        types == [None] and ('properties' in schema or 'required' in schema))


def _enveloped(schema):
    """``schema`` of a mapping, applied to the data of an object
    primitive when the value is one; with ``x-object`` (an object's
    name), anything but such a primitive (one of ours of another name,
    a plain mapping) is refused."""
    wrapped = schema
    named = schema.get('x-object')
    if named:
        wrapped = {'not': True, 'x-expected': named}
    for data in reversed(DATA_KEYS):
        fields = {data: schema}
        if named and data == DATA_KEYS[0]:
            fields[NAME_KEY] = {'const': named, 'x-expected': named}
        wrapped = {
            'if': {'type': 'object', 'required': [data]},
            'then': {'properties': fields},
            'else': wrapped,
        }
    return wrapped


def fields_of(value):
    """The fields of an object primitive (its data), else ``value``."""
    if type(value) is dict:
        for key in DATA_KEYS:
            data = value.get(key)
            if data is not None:
                return data
    return value


class Fields(dict):
    """A mapping (an object primitive's data) as a rule reads it: items
    are also attributes, nested object primitives their fields (each
    wrapped once, when first read)."""

    __slots__ = ()

    def __getitem__(self, name):
        return _read(self, name, dict.__getitem__, dict.__setitem__)

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def values(self):
        return [self[key] for key in dict.keys(self)]

    def items(self):
        return [(key, self[key]) for key in dict.keys(self)]


class _Items(list):
    """A list as a rule reads it: object primitives as their fields."""

    __slots__ = ()

    def __getitem__(self, index):
        return _read(self, index, list.__getitem__, list.__setitem__)

    def __iter__(self):
        return (self[index] for index in range(len(self)))


#: containers of the message as it arrived (not yet wrapped)
_RAW = frozenset((dict, list, tuple))


def _read(container, key, get, put):
    """``container[key]`` as a rule reads it, wrapped once (``_seen``)
    and kept in ``container`` wrapped."""
    value = get(container, key)
    if type(value) in _RAW:
        value = _seen(value)
        put(container, key, value)
    return value


def _seen(value):
    if type(value) is dict:
        return Fields(fields_of(value))
    if type(value) in (list, tuple):
        return _Items(value)
    return value


def rules_by_argument(rules):
    """``{argument: [(steps, [(keyword, value)])]}`` of ``derive``'s
    rules of a method's schema, ``steps`` below the argument: the rules
    judging one place together, so each place is found once."""
    grouped = {}
    for where, keyword, value in rules:
        places = grouped.setdefault(where[0], {})
        places.setdefault(where[1:], []).append((keyword, value))
    return {name: list(places.items()) for name, places in grouped.items()}


def run_rules(rules, functions, name, value):
    """The first ``Problem`` of ``rules`` (``rules_by_argument``'s, of
    argument ``name``) on its ``value``, as ``(path, Problem)``, else
    None. Reads only the values the rules name."""
    root = _seen(value)
    for steps, judged in rules:
        for path, instance in _located(root, steps, (name,)):
            for keyword, setting in judged:
                problem = functions[keyword](setting, instance)
                if problem is not None:
                    return path, problem
    return None


def _located(value, steps, path):
    """(path, value) of every value ``steps`` reach from ``value`` (a
    value as ``_seen`` wraps it)."""
    if not steps:
        yield path, value
        return
    step, rest = steps[0], steps[1:]
    if step != '*':
        if isinstance(value, Fields) and step in value:
            yield from _located(value[step], rest, path + (step,))
        return
    if isinstance(value, Fields):
        pairs = value.items()
    elif isinstance(value, _Items):
        pairs = enumerate(value)
    else:
        return
    for key, item in pairs:
        yield from _located(item, rest, path + (key,))
