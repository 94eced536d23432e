"""SchedulerObject's own shortcuts answer exactly as oslo.versionedobjects."""

import pytest

from scheduler import objects


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
