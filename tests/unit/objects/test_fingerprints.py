"""Every object's fingerprint is pinned, so a wire change can't slip in.

If ``test_versions`` fails, you changed the fields or remotable methods of
an object. Do not just paste the new hash: bump the object's ``VERSION``,
add a ``# Version X.Y:`` line saying what changed, make
``obj_make_compatible`` strip the new field for older targets, and only
then update the hash below (nova's tests/unit/objects/test_objects.py).
"""

from oslo_versionedobjects import fixture

from scheduler.objects import base

object_data = {
    'Aggregate': '1.0-40b146c3ff43bca20c81848083b060c7',
    'ComputeNode': '1.1-1cd6135ed7de0d637235df169240690d',
    'Destination': '1.0-4c59dd1288b2e7adbda6051a2de59183',
    'Flavor': '1.0-2dda3a37f138859fab45844a33cfc281',
    'ImageMeta': '1.0-91389f24496ac204858cd34110521f7c',
    'InstanceGroup': '1.0-ba9bb8ae6515894654d177d23a5eb73c',
    'InstanceInfo': '1.0-0eb98bc7675af4b1596de302cc8aa847',
    'LocalityRule': '1.0-80f3b0566faf92f4c563fd1a6062cb7d',
    'ResourceGroup': '1.0-882b4d626daf5d4a072d96614abb6891',
    'RequestSpec': '1.2-02397bd437f47cc881e56c445f1111e4',
    'SchedulerRetries': '1.0-42b6d1f650df5058c2b105e630022b56',
    'SelectDestinationsPayload': '1.0-7c52d6bbaa683253b656ce61bb45e2c2',
    'Selection': '1.1-bf76c4e74ef4ed78b0d6c0b45157ede9',
}


def test_versions():
    checker = fixture.ObjectVersionChecker(
        base.SchedulerObjectRegistry.obj_classes())
    expected, actual = checker.test_hashes(object_data)
    assert expected == actual, (
        'Some objects changed; bump their VERSION, add obj_make_compatible '
        'for the new fields, then update object_data')


def test_every_registered_object_is_pinned():
    registered = set(base.SchedulerObjectRegistry.obj_classes())
    assert registered == set(object_data)
