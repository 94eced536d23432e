"""Base class, registry and RPC serializer of the scheduler's objects.

The serializer turns any failure to rebuild an object from the wire
(unknown object name, unsupported version, ill-typed field) into
``scheduler.exception.InvalidRequest`` raised as an *expected* exception, so
the caller gets a clear error back and the worker logs one line instead of
a traceback, then goes on serving.
"""

import datetime
import functools
import re

from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_utils import timeutils
from oslo_utils import versionutils
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import exception as ovo_exception
from oslo_versionedobjects import fields as ovo_fields

from scheduler import context as sched_context
from scheduler import exception

SENT_AT = 'sent_at'

#: field types whose (coerced) values are never objects
_PLAIN_TYPES = (ovo_fields.Boolean, ovo_fields.Dict, ovo_fields.Float,
                ovo_fields.NonNegativeFloat, ovo_fields.Integer,
                ovo_fields.NonNegativeInteger, ovo_fields.List,
                ovo_fields.Set, ovo_fields.String,
                ovo_fields.StringPattern, ovo_fields.DateTime)


#: a UUID in its hyphenated form, either case (ovo's UUID coercion
#: keeps the string it is given; other spellings go through it)
_UUID_FORM = re.compile(r'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                        r'[0-9a-fA-F]{4}-[0-9a-fA-F]{12}')

#: field type -> a predicate true of the values its ``coerce`` returns
#: unchanged (exact types: a subclass may coerce differently)
_KEPT_AS_IS = {
    ovo_fields.String: lambda v: type(v) is str,
    ovo_fields.UUID: (lambda v: type(v) is str
                      and bool(_UUID_FORM.fullmatch(v))),
    ovo_fields.Integer: lambda v: type(v) is int,
    ovo_fields.NonNegativeInteger: lambda v: type(v) is int and v >= 0,
    ovo_fields.Float: lambda v: type(v) is float,
    ovo_fields.NonNegativeFloat: lambda v: type(v) is float and v >= 0,
    ovo_fields.Boolean: lambda v: type(v) is bool,
}


def _dict_element(field):
    """The element field of a dict field whose values ``_KEPT_AS_IS``
    knows; None for any other field."""
    if type(field._type) is not ovo_fields.Dict:
        return None
    element = field._type._element_type
    return element if type(element._type) in _KEPT_AS_IS else None


@functools.lru_cache(maxsize=None)
def _coercion(field):
    """``field.coerce``, or a function that returns the same value
    without ovo's work when the value already is what the field stores:
    a str of a string field, a UUID string, an int, a float, a bool, or
    a dict of such values (held, as ovo holds it, in a ``CoercedDict``
    that coerces what is later put in it). ovo's UUID coercion alone
    cost 9 us a value (it sets up a warnings filter each time)."""
    kept = _KEPT_AS_IS.get(type(field._type))
    if kept is not None:
        nullable = field.nullable

        def scalar(obj, name, value):
            if kept(value) or (value is None and nullable):
                return value
            return field.coerce(obj, name, value)
        return scalar
    element = _dict_element(field)
    if element is None:
        return field.coerce
    element_kept = _KEPT_AS_IS[type(element._type)]

    def mapping(obj, name, value):
        if type(value) is not dict or not all(
                type(k) is str and element_kept(v) for k, v in value.items()):
            return field.coerce(obj, name, value)
        held = ovo_fields.CoercedDict(value)
        held.enable_coercing(element, obj, name)
        return held
    return mapping


def _as_is(obj, name, value):
    return value


def _plain_dict(obj, name, value):
    return None if value is None else dict(value)


@functools.lru_cache(maxsize=None)
def _to_primitive(field):
    """``field.to_primitive``, or a function that gives the same value
    with less work for the fields ``_coercion`` keeps values of as they
    are: such a value is its own primitive (a dict of them, a plain
    copy)."""
    if type(field._type) in _KEPT_AS_IS:
        return _as_is
    if _dict_element(field) is not None:
        return _plain_dict
    return field.to_primitive


@functools.lru_cache(maxsize=64)
def version_tuple(version):
    """``versionutils.convert_version_to_tuple``, once per version
    string: ovo converted both versions of an object it serialized,
    twice each."""
    return versionutils.convert_version_to_tuple(version)


@functools.lru_cache(maxsize=None)
def _object_fields(cls):
    """The fields of ``cls`` that may hold an object."""
    return tuple(name for name, field in cls.fields.items()
                 if not isinstance(field._type, _PLAIN_TYPES))


class SchedulerObjectRegistry(ovo_base.VersionedObjectRegistry):
    pass


class SchedulerObject(ovo_base.VersionedObject,
                      ovo_base.ComparableVersionedObject):
    """Base of every scheduler object."""

    OBJ_SERIAL_NAMESPACE = 'scheduler_object'
    OBJ_PROJECT_NAMESPACE = 'scheduler'

    @classmethod
    def _obj_from_primitive(cls, context, objver, primitive):
        """ovo's, with each field's value coerced and stored as the
        field's property setter does, without going through the
        property: a fresh object has no value a read-only field could
        refuse to change, and the changed fields are set from the
        primitive once all are read, as ovo does (deserializing a
        tracker report's ComputeNode was its dispatch's largest
        step)."""
        self = cls()
        self._context = context
        self.VERSION = objver
        objdata = cls._obj_primitive_field(primitive, 'data')
        changes = cls._obj_primitive_field(primitive, 'changes', [])
        fields = cls.fields
        for name, field in fields.items():
            if name in objdata:
                setattr(self, '_obj_' + name, _coercion(field)(
                    self, name, field.from_primitive(self, name,
                                                     objdata[name])))
        self._changed_fields = {x for x in changes if x in fields}
        return self

    @classmethod
    def build(cls, **values):
        """``cls(**values)``: the same object, each value coerced as its
        field's property would, without going through the property (a
        new object has no read-only value to keep); what the scheduler
        builds for every decision, such as its selections."""
        self = cls()
        fields = cls.fields
        for name, value in values.items():
            setattr(self, '_obj_' + name,
                    _coercion(fields[name])(self, name, value))
        self._changed_fields.update(values)
        return self

    def obj_to_primitive(self, target_version=None, version_manifest=None):
        """ovo's ``obj_to_primitive``, to the same primitive (a unit test
        compares them), with the versions compared as tuples read once
        (``version_tuple``) and the values of plain fields taken as they
        are (``_to_primitive``): a decision's selections go on the wire
        this way."""
        if target_version is None:
            target_version = self.VERSION
        if version_tuple(target_version) > version_tuple(self.VERSION):
            raise ovo_exception.InvalidTargetVersion(version=target_version)
        primitive = {}
        for name, field in self.fields.items():
            try:
                value = getattr(self, '_obj_' + name)
            except AttributeError:
                continue    # not set
            primitive[name] = _to_primitive(field)(self, name, value)
        if target_version != self.VERSION or version_manifest:
            self.obj_make_compatible_from_manifest(
                primitive, target_version, version_manifest)
        key = self._obj_primitive_key
        obj = {key('name'): self.obj_name(),
               key('namespace'): self.OBJ_PROJECT_NAMESPACE,
               key('version'): target_version,
               key('data'): primitive}
        changes = [name for name in self.obj_what_changed()
                   if name in primitive]
        if changes:
            obj[key('changes')] = changes
        return obj

    def obj_attr_is_set(self, attrname):
        """ovo's check, without building the list of every field name
        on each call (``obj_fields``): that was a tenth of a tracker
        report's CPU in a report worker and runs dozens of times per
        decision. Same answers, same AttributeError for a non-field."""
        if attrname not in self.fields \
                and attrname not in self.obj_extra_fields:
            raise AttributeError('%s object has no attribute %r' % (
                self.obj_name(), attrname))
        return hasattr(self, '_obj_' + attrname)

    def obj_set_fields(self):
        """The names of the fields that are set, in one look at each
        (``obj_attr_is_set`` of every field, without its name check)."""
        return {name for name in self.fields
                if hasattr(self, '_obj_' + name)}

    def obj_set_items(self, skip=()):
        """(name, value) of the set fields, in field order, but those in
        ``skip``: what reading each through its property returns."""
        items = []
        for name in self.fields:
            if name not in skip:
                try:
                    items.append((name, getattr(self, '_obj_' + name)))
                except AttributeError:
                    pass    # not set
        return items

    def obj_what_changed(self):
        """ovo's answer (the fields set since the last reset, and those
        holding an object with changes), looking only at the fields
        that may hold an object rather than at every field: it runs
        twice for each object put on the wire, and a Selection's
        changes were a quarter of its serialization."""
        fields = self.fields
        changes = {name for name in self._changed_fields if name in fields}
        for name in _object_fields(type(self)):
            if self.obj_attr_is_set(name):
                value = getattr(self, name)
                if isinstance(value, ovo_base.VersionedObject) and \
                        value.obj_what_changed():
                    changes.add(name)
        return changes

    def obj_set_from_dict(self, values, path):
        """Set fields from ``values``, naming ``path.field`` on errors.

        Unknown keys and values that do not coerce to the field's type
        raise ``InvalidField``.
        """
        for key, value in values.items():
            if key not in self.fields:
                raise exception.InvalidField(
                    field='%s.%s' % (path, key),
                    reason='unknown field (known: %s)' %
                    ', '.join(sorted(self.fields)))
            try:
                setattr(self, key, value)
            except (ValueError, TypeError) as exc:
                raise exception.InvalidField(
                    field='%s.%s' % (path, key), reason=str(exc))
        return self

    def obj_complete(self, path):
        """Give every unset field its default (or None if nullable), here
        and in sub-objects, so no reader meets "Cannot load"; a required
        field left unset raises ``InvalidField`` naming ``path.field``.
        """
        for name, field in self.fields.items():
            if self.obj_attr_is_set(name):
                value = getattr(self, name)
                if isinstance(value, SchedulerObject):
                    value.obj_complete('%s.%s' % (path, name))
                elif isinstance(value, list):
                    for index, item in enumerate(value):
                        if isinstance(item, SchedulerObject):
                            item.obj_complete('%s.%s[%d]' % (path, name,
                                                             index))
            elif field.default is not ovo_fields.UnspecifiedDefault:
                self.obj_set_defaults(name)
            elif field.nullable:
                setattr(self, name, None)
            else:
                raise exception.InvalidField(field='%s.%s' % (path, name),
                                             reason='missing')
        return self

    def get(self, name, default=None):
        """Value of ``name``, or ``default`` when unset."""
        if self.obj_attr_is_set(name):
            return getattr(self, name)
        return default


#: what ``serialize_context`` writes: a naive UTC ``isoformat``
_ISOFORMAT = re.compile(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?')


def read_sent_at(stamp):
    """A message's send time (its context's ``sent_at``) as naive UTC.
    The stamp this serializer writes is read by ``datetime.fromisoformat``
    (a tenth of the cost of the general ISO 8601 parser, for the same
    value); any other is read by the general one. Raises ``ValueError``
    or ``TypeError`` for what is no time, ``ValueError`` for one that
    UTC cannot hold (an offset at the ends of the calendar)."""
    if isinstance(stamp, str) and _ISOFORMAT.fullmatch(stamp):
        return datetime.datetime.fromisoformat(stamp)
    try:
        return timeutils.normalize_time(timeutils.parse_isotime(stamp))
    except OverflowError as exc:
        raise ValueError('%s: out of range in UTC' % exc)


def _invalid(reason):
    """Raise InvalidRequest wrapped so the RPC server treats it as expected."""
    try:
        raise exception.InvalidRequest(reason=reason)
    except exception.InvalidRequest:
        raise rpc_dispatcher.ExpectedException()


class SchedulerObjectSerializer(ovo_base.VersionedObjectSerializer):
    """Serializes scheduler objects and contexts for oslo.messaging."""

    OBJ_BASE_CLASS = SchedulerObject

    def serialize_entity(self, context, entity):
        """An object whose ``wire_version`` attribute is set goes on the
        wire at that version (``obj_make_compatible``): a reply to a
        caller that may be of an older release."""
        version = getattr(entity, 'wire_version', None)
        if isinstance(entity, SchedulerObject) and version:
            return entity.obj_to_primitive(target_version=version)
        return super().serialize_entity(context, entity)

    def deserialize_entity(self, context, entity):
        try:
            return super().deserialize_entity(context, entity)
        except ovo_exception.UnsupportedObjectError as exc:
            _invalid('unknown object on the wire: %s' % exc)
        except ovo_exception.IncompatibleObjectVersion as exc:
            _invalid('unsupported object version: %s' % exc)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            _invalid('malformed object: %s: %s' % (type(exc).__name__, exc))

    def serialize_context(self, context):
        values = {} if context is None else context.to_dict()
        # when this message was sent (this clock, microseconds): what
        # orders casts that reach different threads and workers
        values[SENT_AT] = timeutils.utcnow().isoformat()
        return values

    def deserialize_context(self, context):
        values, stamp = context or {}, None
        if isinstance(values, dict):
            values = dict(values)
            stamp = values.pop(SENT_AT, None)
        try:
            ctxt = sched_context.RequestContext.from_dict(values)
            ctxt.sent_at = None if stamp is None else read_sent_at(stamp)
        except (TypeError, ValueError, AttributeError) as exc:
            _invalid('malformed request context: %s' % exc)
        return ctxt
