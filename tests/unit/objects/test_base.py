"""SchedulerObject's own shortcuts answer exactly as oslo.versionedobjects."""

import pytest
from oslo_versionedobjects import base as ovo_base

from scheduler import objects
from tests.unit.objects import samples


def test_obj_attr_is_set_answers_as_ovo_does():
    from oslo_versionedobjects import base as ovo_base
    node = objects.ComputeNode(host='h', hypervisor_hostname='h', vcpus=2)
    for name in list(node.fields) + list(node.obj_extra_fields):
        assert node.obj_attr_is_set(name) == \
            ovo_base.VersionedObject.obj_attr_is_set(node, name)
    assert node.obj_attr_is_set('vcpus')
    assert not node.obj_attr_is_set('memory_mb')
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        node.obj_attr_is_set('nope')


def _what_changed_as_ovo(obj):
    return ovo_base.VersionedObject.obj_what_changed(obj)


@pytest.mark.parametrize('name', sorted(samples.scheduler_objects()))
def test_obj_what_changed_answers_as_ovo_does(name):
    obj = samples.sample(samples.scheduler_objects()[name])
    assert obj.obj_what_changed() == _what_changed_as_ovo(obj) == set(
        obj.fields)
    obj.obj_reset_changes(recursive=True)
    assert obj.obj_what_changed() == _what_changed_as_ovo(obj) == set()
    # a change inside a sub-object is a change of the field holding it
    for field, value in ((f, getattr(obj, f)) for f in obj.fields):
        if isinstance(value, objects.base.SchedulerObject):
            some = next(iter(value.fields))
            setattr(value, some, getattr(value, some))
            assert field in obj.obj_what_changed()
            assert obj.obj_what_changed() == _what_changed_as_ovo(obj)
            value.obj_reset_changes(recursive=True)
    assert obj.obj_what_changed() == _what_changed_as_ovo(obj) == set()


def test_obj_set_fields_are_those_obj_attr_is_set_says():
    node = objects.ComputeNode(host='h', vcpus=2, stats={})
    assert node.obj_set_fields() == {'host', 'vcpus', 'stats'} == {
        name for name in node.fields if node.obj_attr_is_set(name)}
    del node.vcpus
    assert node.obj_set_fields() == {'host', 'stats'}


@pytest.mark.parametrize('name', sorted(samples.scheduler_objects()))
def test_obj_set_items_read_as_the_fields_do(name):
    obj = samples.sample(samples.scheduler_objects()[name])
    first = next(iter(obj.fields))
    delattr(obj, first)
    assert obj.obj_set_items() == [(f, getattr(obj, f)) for f in obj.fields
                                   if obj.obj_attr_is_set(f)]
    last = list(obj.fields)[-1]
    assert [f for f, _ in obj.obj_set_items(skip={last})] == [
        f for f in obj.fields if f not in (first, last)]


def _comparable(primitive):
    """``primitive`` with its lists of changed fields in a set: ovo
    lists them in the order of a set."""
    if isinstance(primitive, list):
        return [_comparable(item) for item in primitive]
    if not isinstance(primitive, dict):
        return primitive
    return {key: set(value) if key.endswith('.changes')
            else _comparable(value) for key, value in primitive.items()}


def _primitive_or_error(serialize, *args):
    try:
        return _comparable(serialize(*args))
    except Exception as exc:
        return type(exc), str(exc)


def _versions(cls):
    """Every version of ``cls`` from 1.0 to its own."""
    major, minor = (int(x) for x in cls.VERSION.split('.'))
    return ['%d.%d' % (major, m) for m in range(minor + 1)]


@pytest.mark.parametrize('name', sorted(samples.scheduler_objects()))
def test_obj_to_primitive_is_ovo_s(name):
    cls = samples.scheduler_objects()[name]
    obj = samples.sample(cls)
    ovo_s = ovo_base.VersionedObject.obj_to_primitive
    for version in _versions(cls) + [None]:
        assert _primitive_or_error(obj.obj_to_primitive, version) == \
            _primitive_or_error(ovo_s, obj, version)
    obj.obj_reset_changes(recursive=True)
    last = list(obj.fields)[-1]
    setattr(obj, last, getattr(obj, last))
    assert _primitive_or_error(obj.obj_to_primitive) == \
        _primitive_or_error(ovo_s, obj)
    newer = '%s.%d' % (cls.VERSION.split('.')[0],
                       int(cls.VERSION.split('.')[1]) + 1)
    with pytest.raises(ovo_base.exception.InvalidTargetVersion):
        obj.obj_to_primitive(newer)


@pytest.mark.parametrize('name', sorted(samples.scheduler_objects()))
def test_build_makes_the_object_the_constructor_makes(name):
    cls = samples.scheduler_objects()[name]
    values = dict(samples.sample(cls).obj_set_items())
    built, constructed = cls.build(**values), cls(**values)
    assert _comparable(built.obj_to_primitive()) == \
        _comparable(constructed.obj_to_primitive())
    assert built.obj_what_changed() == constructed.obj_what_changed()
    for field in cls.fields:
        assert type(getattr(built, field)) is \
            type(getattr(constructed, field)), field


def test_build_coerces_what_is_not_yet_of_the_field_s_type():
    upper = '6F1B3C2E1D2A4C5B9E8F0A1B2C3D4E5F'
    built = objects.Selection.build(
        host=7, nodename=None, compute_node_uuid=upper, weight=2,
        is_alternate=0, limits={'VCPU': '8'})
    assert built.host == '7' and built.nodename is None
    assert built.compute_node_uuid == upper     # ovo keeps its spelling
    assert built.weight == 2.0 and type(built.weight) is float
    assert built.is_alternate is False and built.limits == {'VCPU': 8}
    # a value put in a dict field later is coerced as ovo coerces it
    built.limits['MEMORY_MB'] = '512'
    assert built.limits['MEMORY_MB'] == 512
    with pytest.raises(ValueError):
        objects.Selection.build(host=None)
    with pytest.raises(ValueError):
        objects.ComputeNode.build(vcpus=-1)
