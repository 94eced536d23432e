"""The ``[limits]`` as JSON Schema, so that the validator's walk holds them.

``bounded(schema, limits, raw_objects)`` is a method's wire schema
(``scheduler.edge.schemas.wire``) with every argument also held, at
every node, to what ``scheduler.edge.walk.check_structure``
judges, so that one pass of the validator checks both:

* a string (a value or a mapping's key) at most ``max_string_length``
  characters; a key that is no string or no valid unicode (a lone
  surrogate) makes ``jsonschema_rs`` raise ``ValueError``. A lone
  surrogate in a string value passes it (0.60): the edge takes the one
  pass only for a message whose text the transport found free of
  surrogates (``scheduler.transport.wire.text_length``);
* a list or mapping at most ``max_list_length`` items, nested at most
  ``max_nesting_depth`` deep (``free<levels>``: a value that may hold
  ``levels`` more levels of lists and mappings);
* every value of a JSON type (NaN and the infinities are of none), a
  number within 64 bits;
* the fields of an object primitive whose values oslo.versionedobjects
  would coerce into something else (``field_schema``: a fractional
  number or a string no whole number for an integer field, a string no
  finite number for a float field, anything but a boolean for a boolean
  one; the values of a dict of such), anywhere in the message: each
  field name has one such rule across the registered objects
  (``FIELDS``); a plain dict of an argument of ``raw_objects`` holds that
  object's fields.

The bounds are at least as strict as the walk, never looser: a message
they refuse may still pass the walk (a whole float past 64 bits, an
object primitive nested at the very limit, whose data the bounds count
as a level and the walk does not), and the edge then runs the walk,
which words the refusal or lets the message pass
(``scheduler.edge.validation``). Counting the values of a message is no
schema's: the edge bounds their number by the length of the text the
message was read from.

>>> import types
>>> free(0, types.SimpleNamespace(max_string_length=9))['type']
['null', 'boolean', 'number', 'string']
"""

from oslo_versionedobjects import fields as ovo_fields

from scheduler.objects import base
from scheduler.edge.schemas import wire

INT_MIN, INT_MAX = -2 ** 63, 2 ** 63 - 1
_SCALARS = ['null', 'boolean', 'number', 'string']
_DATA = wire.DATA_KEYS[0]
#: formats of the strings of coercible fields (``FORMATS``)
WHOLE, FINITE = 'whole-number', 'finite-number'


def whole_number(text):
    """The whole number ``text`` spells as ovo's Integer coerces it, or
    None (one parse for the ``WHOLE`` format and ``walk``'s wording)."""
    try:
        return int(text)
    except ValueError:
        return None


def finite_number(text):
    """The number ``text`` spells as ovo's Float coerces it, or None if
    it spells none, NaN or an infinity."""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number - number == 0 else None


def in_int_range(number):
    """Does ``number`` fit a 64-bit integer column?"""
    return INT_MIN <= number <= INT_MAX


def _whole_text(value):
    number = whole_number(value)
    return number is not None and in_int_range(number)


def _finite_text(value):
    return finite_number(value) is not None


FORMATS = {WHOLE: _whole_text, FINITE: _finite_text}
_NOT_BOOLEAN = {'not': {'type': 'boolean'}}


def field_schema(field_type):
    """What a value of a field of ``field_type`` must be for coercion to
    keep it (see module doc); None for a type that needs nothing."""
    if isinstance(field_type, (ovo_fields.Integer,
                               ovo_fields.NonNegativeInteger)):
        return dict(_NOT_BOOLEAN, multipleOf=1, format=WHOLE)
    if isinstance(field_type, (ovo_fields.Float,
                               ovo_fields.NonNegativeFloat)):
        return dict(_NOT_BOOLEAN, format=FINITE)
    if isinstance(field_type, ovo_fields.Boolean):
        return {'type': ['boolean', 'null']}
    if isinstance(field_type, ovo_fields.Dict):
        each = field_schema(getattr(field_type._element_type, '_type', None))
        return None if each is None else {'additionalProperties': each}
    return None


def object_fields(name):
    """``{field: schema}`` of the coercible fields of object ``name``."""
    classes = base.SchedulerObjectRegistry.obj_classes().get(name) or []
    found = ((field, field_schema(getattr(kind, '_type', None)))
             for field, kind in (classes[0].fields.items() if classes
                                 else ()))
    return {field: schema for field, schema in found if schema is not None}


def all_fields():
    """``{field: schema}`` of every registered object's coercible
    fields; ValueError if two objects give one field name two rules
    (the bounds judge a primitive's data without reading its name)."""
    found = {}
    for name in sorted(base.SchedulerObjectRegistry.obj_classes()):
        for field, schema in object_fields(name).items():
            if found.setdefault(field, schema) != schema:
                raise ValueError('field %s of %s has another rule than in '
                                 'another object' % (field, name))
    return found


def _ref(levels):
    return {'$ref': '#/$defs/free%d' % levels}


def free(levels, limits, fields=None):
    """The bounds of a value that may hold ``levels`` more levels of
    lists and mappings; ``fields``: ``all_fields()``."""
    node = {'type': _SCALARS + ['array', 'object'] if levels else _SCALARS,
            'maxLength': limits.max_string_length,
            'minimum': INT_MIN, 'maximum': INT_MAX}
    if not levels:
        return node
    inner = _ref(levels - 1)
    node.update(
        items=inner, maxItems=limits.max_list_length,
        additionalProperties=inner, maxProperties=limits.max_list_length,
        propertyNames={'maxLength': limits.max_string_length},
        properties={wire.NAME_KEY: {
            'type': 'string', 'maxLength': limits.max_string_length},
            _DATA: dict(inner, properties=fields)})
    return node


def definitions(limits):
    """``$defs`` of every ``free<levels>`` up to ``max_nesting_depth``."""
    fields = all_fields()
    return {'free%d' % levels: free(levels, limits, fields)
            for levels in range(limits.max_nesting_depth + 1)}


def value_bounds(limits):
    """The bounds of one value (a message's context) as a schema."""
    return dict(_ref(limits.max_nesting_depth),
                **{'$defs': definitions(limits)})


def bounded(schema, limits, raw_objects=None):
    """``schema`` (a wire schema of a method's arguments, as a mapping
    of them) and the bounds of every argument (see module doc)."""
    root = _ref(limits.max_nesting_depth)
    arguments = {name: dict(root, properties=object_fields(kind))
                 for name, kind in (raw_objects or {}).items()}
    bounds = {'properties': arguments, 'additionalProperties': root}
    return {'allOf': [schema, bounds], '$defs': definitions(limits)}
