"""A fully populated sample of any scheduler object, built from its field
types alone, so generic tests cover objects nobody wrote a sample for.

``sample(cls)`` sets every field (sub-objects recursively) to a valid,
non-default value; ``scheduler_objects()`` is every registered object
class of this project, by name.
"""

import datetime

from oslo_versionedobjects import fields

from scheduler.objects import base

UUID = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5f'
_BY_TYPE = [
    # most specific first: NonNegativeIntegerField is an IntegerField
    (fields.UUIDField, UUID),
    (fields.IPAddressField, '192.0.2.10'),
    (fields.DateTimeField,
     datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)),
    (fields.BooleanField, True),
    (fields.NonNegativeIntegerField, 3),
    (fields.IntegerField, 3),
    (fields.NonNegativeFloatField, 1.5),
    (fields.FloatField, 1.5),
    (fields.StringField, 'sample'),
    (fields.DictOfIntegersField, {'k': 1}),
    (fields.DictOfListOfStringsField, {'k': ['v']}),
    (fields.DictOfNullableStringsField, {'k': 'v'}),
    (fields.DictOfStringsField, {'k': 'v'}),
    (fields.ListOfDictOfNullableStringsField, [{'k': 'v'}]),
    (fields.ListOfListsOfStringsField, [['a', 'b']]),
    (fields.ListOfStringsField, ['a']),
]


def scheduler_objects():
    return {name: classes[0] for name, classes in
            base.SchedulerObjectRegistry.obj_classes().items()
            if issubclass(classes[0], base.SchedulerObject)}


def _value(field):
    if isinstance(field, fields.ObjectField):
        return sample(scheduler_objects()[field._type._obj_name])
    if isinstance(field, fields.ListOfObjectsField):
        return [sample(scheduler_objects()[field._type._element_type
                                           ._type._obj_name])]
    for field_class, value in _BY_TYPE:
        if isinstance(field, field_class):
            return value
    if isinstance(getattr(field, '_type', None), fields.Dict):
        # a nested dict field (ComputeNode.inventories): class -> numbers
        return {'CUSTOM_SAMPLE': {'total': 4.0, 'reserved': 0.0}}
    raise AssertionError('no sample value for %s' % type(field).__name__)


# fields an older version cannot carry: a backport refuses a non-empty
# value rather than drop it (a different request would be placed)
REFUSED_BELOW = {'RequestSpec': {'resource_groups': (1, 2)}}


def sample_for_version(cls, version):
    """``sample(cls)`` with what ``version`` cannot carry left empty."""
    obj = sample(cls)
    wanted = tuple(int(part) for part in version.split('.'))
    for field, since in REFUSED_BELOW.get(cls.obj_name(), {}).items():
        if wanted < since:
            setattr(obj, field, [])
    return obj


def sample(cls):
    obj = cls()
    for name, field in cls.fields.items():
        setattr(obj, name, _value(field))
    return obj
