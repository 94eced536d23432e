"""What the validator found wrong, as the edge words it to the caller.

``invalid_field(error, schema)`` turns an error of ``jsonschema_rs``
(``instance_path``, ``schema_path`` into the wire schema ``schema``,
``kind``) into ``scheduler.exception.InvalidField``: the field as the
caller knows it (``spec_obj.flavor.vcpus``, ``aggregates[0].uuid``: the
data step of an object primitive is no field), and what was wrong: the
object expected (``x-expected``, ``wire``), the schema's own
``x-reason`` where it has one, the reason of the project's format
(``keywords.FORMATS``), or the keyword's meaning. The caller's
value is echoed cut to a few hundred characters (``exception.echo``).
"""

from scheduler import exception
from scheduler.edge.schemas import keywords
from scheduler.edge.schemas import wire


def field_name(steps):
    """``spec_obj.flavor.vcpus`` of the path ``steps`` (keys, indexes)."""
    steps = [step for step in steps if step not in wire.ENVELOPE_STEPS]
    field = str(steps[0]) if steps else 'args'
    for step in steps[1:]:
        field += '[%d]' % step if isinstance(step, int) else '.%s' % step
    return field


def _type_reason(error, kind):
    expected = kind.value if isinstance(kind.value, list) else [kind.value]
    return 'expected %s, got %s' % (' or '.join(map(str, expected)),
                                    _type_name(error.instance))


def _type_name(value):
    return type(value).__name__


_REASONS = {
    'type': lambda e, k: _type_reason(e, k),
    'minimum': lambda e, k: 'must be at least %s' % k.value,
    'maximum': lambda e, k: 'must be at most %s, got %s' % (
        k.value, exception.echo(e.instance)),
    'exclusiveMinimum': lambda e, k: 'must be positive, got %s' % (
        exception.echo(e.instance),),
    'minLength': lambda e, k: 'must not be empty',
    'maxLength': lambda e, k: 'longer than %d characters' % k.value,
    'minItems': lambda e, k: 'needs at least %d item(s)' % k.value,
    'maxItems': lambda e, k: 'at most %d items' % k.value,
    'enum': lambda e, k: 'expected one of %s, got %s' % (
        ', '.join(map(str, k.value)), exception.echo(e.instance)),
    'required': lambda e, k: 'missing',
}


def _subschema(schema, path):
    """The schema holding the keyword at ``path`` (a schema path)."""
    node = schema
    for step in path[:-1]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return {}
    return node if isinstance(node, dict) else {}


def _deepest(error):
    """Of an ``anyOf`` error without a reason of its own, the sub-error
    that went deepest into the value: the one that names the field."""
    candidates = [sub for branch in error.kind.context for sub in branch]
    return max(candidates, key=lambda sub: len(sub.instance_path))


def invalid_field(error, schema):
    """The ``InvalidField`` of ``error`` (see module doc)."""
    where = _subschema(schema, error.schema_path)
    custom = where.get('x-reason')
    kind = error.kind
    if 'x-expected' in where:
        got = exception.echo(error.instance) if kind.name == 'const' \
            else _type_name(error.instance)
        return exception.InvalidField(
            field=field_name(error.instance_path), reason='expected %s, '
            'got %s' % (where['x-expected'], got))
    if not custom and kind.name in ('anyOf', 'oneOf') and \
            kind.context and any(kind.context):
        return invalid_field(_deepest(error), schema)
    steps = list(error.instance_path)
    if kind.name == 'required':
        steps.append(kind.value)
    if kind.name == 'propertyNames':
        inner = kind.value
        steps.append(inner.instance)
        reason = _format_reason(inner)
        if reason is None:
            reason = 'not a name: %s' % exception.echo(inner.instance)
    elif custom:
        reason = '%s, got %s' % (custom, exception.echo(error.instance))
    elif kind.name == 'format':
        reason = _format_reason(error) or error.message
    else:
        explain = _REASONS.get(kind.name)
        reason = explain(error, kind) if explain else error.message
    return exception.InvalidField(field=field_name(steps), reason=reason)


def _format_reason(error):
    """The project's reason for a string not of its format, if any."""
    kind = error.kind
    if kind.name != 'format':
        return None
    reason_of = keywords.FORMATS.get(kind.value)
    return reason_of(error.instance) if reason_of else None
