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
