"""Every object backports to every older version of itself, generically.

``FIELDS`` is the field list of each object at each version it has had.
When you bump an object: add its new version here with the new field list
(the first test fails until you do), make ``obj_make_compatible`` remove
or convert the new fields, and list the version an older RPC API expects
in ``scheduler.client.rpcapi.OBJECT_VERSIONS``. The functional suite also loads
these backports with the previous release's own code
(tests/functional/test_upgrade.py).
"""

import pytest
from oslo_versionedobjects import fixture

from scheduler import exception
from scheduler.client import rpcapi
from tests.unit.objects import samples

FIELDS = {
    'Aggregate': {'1.0': ['hosts', 'metadata', 'name', 'uuid']},
    'ComputeNode': {'1.0': [
        'availability_zone', 'cpu_allocation_ratio', 'cpu_info',
        'current_workload', 'disabled', 'disk_allocation_ratio',
        'disk_available_least', 'free_disk_gb', 'free_ram_mb', 'host',
        'host_ip', 'hypervisor_hostname', 'hypervisor_type',
        'hypervisor_version', 'local_gb', 'local_gb_used', 'memory_mb',
        'memory_mb_used', 'metrics', 'numa_topology', 'pci_device_pools',
        'ram_allocation_ratio', 'reserved_host_cpus',
        'reserved_host_disk_mb', 'reserved_host_memory_mb', 'running_vms',
        'stats', 'supported_instances', 'updated_at', 'uuid', 'vcpus',
        'vcpus_used']},
    'Destination': {'1.0': ['host', 'node']},
    'Flavor': {'1.0': ['ephemeral_gb', 'extra_specs', 'flavorid',
                       'memory_mb', 'name', 'root_gb', 'swap', 'vcpus']},
    'ImageMeta': {'1.0': ['id', 'min_disk', 'min_ram', 'name',
                          'properties']},
    'InstanceGroup': {'1.0': ['hosts', 'members', 'name', 'policy',
                              'rules', 'uuid']},
    'InstanceInfo': {'1.0': ['flavor', 'group_uuid', 'host',
                             'image_properties', 'node', 'project_id',
                             'task_state', 'user_id', 'uuid']},
    'RequestSpec': {'1.0': [
        'availability_zone', 'flavor', 'force_hosts', 'force_nodes',
        'ignore_hosts', 'image', 'instance_group', 'instance_uuids',
        'num_instances', 'project_id', 'requested_destination', 'retry',
        'scheduler_hints', 'user_id'],
        '1.1': [
        'availability_zone', 'flavor', 'force_hosts', 'force_nodes',
        'ignore_hosts', 'image', 'instance_group', 'instance_uuids',
        'is_bfv', 'num_instances', 'project_id', 'requested_destination',
        'retry', 'scheduler_hints', 'user_id']},
    'SchedulerRetries': {'1.0': ['hosts', 'num_attempts']},
    'SelectDestinationsPayload': {'1.0': [
        'availability_zone', 'duration_ms', 'error', 'error_class',
        'flavor', 'hosts', 'instance_uuids', 'num_instances', 'project_id',
        'request_id']},
    'Selection': {'1.0': ['allocation', 'allocation_id',
                          'compute_node_uuid', 'host', 'instance_uuid',
                          'is_alternate', 'limits', 'nodename', 'weight']},
}


def _next_version(name, version, previous, added):
    """``name`` at ``version``: its fields at ``previous`` plus ``added``."""
    FIELDS[name][version] = sorted(FIELDS[name][previous] + added)


_next_version('ComputeNode', '1.1', '1.0',
              ['inventories', 'kind', 'locality', 'traits', 'used'])
_next_version('RequestSpec', '1.2', '1.1', ['locality', 'resource_groups'])
_next_version('Selection', '1.1', '1.0', ['providers'])
FIELDS['ResourceGroup'] = {'1.0': ['any_traits', 'forbidden_traits', 'kind',
                                   'name', 'required_traits', 'resources']}
FIELDS['LocalityRule'] = {'1.0': ['groups', 'hard', 'policy', 'scope']}

CASES = [(name, version) for name in sorted(FIELDS)
         for version in sorted(FIELDS[name])]


def test_every_object_lists_its_current_fields():
    classes = samples.scheduler_objects()
    assert set(classes) == set(FIELDS)
    for name, cls in classes.items():
        assert FIELDS[name].get(cls.VERSION) == sorted(cls.fields), (
            '%s %s: add its field list to FIELDS' % (name, cls.VERSION))


@pytest.mark.parametrize('name,version', CASES,
                         ids=['%s-%s' % case for case in CASES])
def test_backport_keeps_only_the_fields_of_that_version(name, version):
    cls = samples.scheduler_objects()[name]
    primitive = samples.sample_for_version(cls, version).obj_to_primitive(
        target_version=version)
    data = primitive['scheduler_object.data']
    assert primitive['scheduler_object.version'] == version
    assert set(data) <= set(FIELDS[name][version]), (
        '%s: obj_make_compatible leaves %s in %s' % (
            name, sorted(set(data) - set(FIELDS[name][version])), version))
    # and what an older peer sends back loads in the current code
    loaded = cls.obj_from_primitive(primitive)
    assert set(loaded.obj_what_changed()) == set(data)


def test_compatibility_routines_of_oslo_versionedobjects():
    checker = fixture.ObjectVersionChecker(
        {name: [cls] for name, cls in samples.scheduler_objects().items()})
    checker.test_compatibility_routines(use_manifest=True)


def test_rpc_manifests_name_versions_the_objects_had():
    for cap, manifest in rpcapi.OBJECT_VERSIONS.items():
        for name, version in manifest.items():
            assert version in FIELDS[name], (cap, name, version)


@pytest.mark.parametrize('version', ['1.0', '1.1'])
def test_backport_refuses_resource_groups_an_older_worker_cannot_place(
        version):
    spec = samples.sample(samples.scheduler_objects()['RequestSpec'])
    with pytest.raises(exception.InvalidField, match='resource_groups'):
        spec.obj_to_primitive(target_version=version)
