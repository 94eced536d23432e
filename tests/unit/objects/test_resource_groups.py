"""RequestSpec.resource_groups and locality: the legacy dict pair, older
versions on the wire, validation at the edge and in the client, and
Selection.provider_for."""

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.model import resource_groups
from tests.unit.edge import test_schemas

UUID1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5f'
LEGACY = {
    'instance_type': {'vcpus': 2, 'memory_mb': 2048, 'root_gb': 0},
    'num_instances': 1,
    'resource_groups': [
        {'name': 'compute', 'kind': 'compute'},
        {'name': 'volume', 'kind': 'storage',
         'resources': {'DISK_GB': 100},
         'required_traits': ['STORAGE_DISK_SSD']}],
    'locality': [{'groups': ['compute', 'volume'], 'scope': 'rack',
                  'policy': 'same', 'hard': False}],
}


def _spec(**changes):
    spec = objects.RequestSpec.from_primitives(dict(LEGACY, **changes), {})
    return spec.obj_complete('spec')


def test_legacy_dict_pair_carries_groups_and_rules():
    spec = _spec()
    assert [g.name for g in spec.resource_groups] == ['compute', 'volume']
    volume = spec.resource_groups[1]
    assert (volume.kind, volume.resources, volume.required_traits,
            volume.any_traits) == ('storage', {'DISK_GB': 100},
                                   ['STORAGE_DISK_SSD'], [])
    [rule] = spec.locality
    assert (rule.scope, rule.policy, rule.hard) == ('rack', 'same', False)


def test_legacy_dict_with_an_unknown_group_field_names_it():
    bad = [{'name': 'v', 'kind': 'storage', 'size': 1}]
    with pytest.raises(exception.InvalidField) as exc:
        _spec(resource_groups=bad)
    assert exc.value.kwargs['field'] == 'request_spec.resource_groups[0].size'


def test_version_1_1_primitive_refuses_groups_and_keeps_is_bfv():
    spec = _spec()
    spec.is_bfv = True
    with pytest.raises(exception.InvalidField, match='resource_groups'):
        spec.obj_to_primitive(target_version='1.1')
    spec.resource_groups = []
    data = spec.obj_to_primitive(target_version='1.1')[
        'scheduler_object.data']
    assert 'resource_groups' not in data and 'locality' not in data
    assert data['is_bfv'] is True
    spec = _spec()
    rebuilt = objects.RequestSpec.obj_from_primitive(
        spec.obj_to_primitive())
    assert rebuilt.resource_groups[1].resources == {'DISK_GB': 100}


def test_without_groups_the_flavor_is_the_one_compute_group():
    spec = _spec(resource_groups=[], locality=[])
    [group] = resource_groups.demands(spec, {'VCPU': 2, 'MEMORY_MB': 2048})
    assert (group.name, group.kind, group.resources) == (
        'compute', 'compute', {'VCPU': 2, 'MEMORY_MB': 2048})


def test_a_compute_group_without_resources_takes_the_flavor():
    groups = resource_groups.demands(_spec(), {'VCPU': 2})
    assert [g.resources for g in groups] == [{'VCPU': 2}, {'DISK_GB': 100}]


@pytest.mark.parametrize('changes, field', [
    ({'resource_groups': [{'name': 'a', 'kind': 'storage',
                           'resources': {'DISK': 1}}]},
     'spec.resource_groups[0].resources.DISK'),
    ({'resource_groups': [{'name': 'a', 'kind': 'storage',
                           'resources': {'DISK_GB': 0}}]},
     'spec.resource_groups[0].resources.DISK_GB'),
    ({'resource_groups': [{'name': 'a', 'kind': 'storage'}]},
     'spec.resource_groups[0].resources'),
    ({'resource_groups': [{'name': 'a', 'kind': 'storage',
                           'resources': {'DISK_GB': 1},
                           'any_traits': [[]]}]},
     'spec.resource_groups[0].any_traits[0]'),
    ({'resource_groups': [{'name': 'a', 'kind': 'storage',
                           'resources': {'DISK_GB': 1},
                           'required_traits': ['CUSTOM_X'],
                           'forbidden_traits': ['CUSTOM_X']}]},
     'spec.resource_groups[0].forbidden_traits'),
    ({'resource_groups': [{'name': 'a'}, {'name': 'a', 'kind': 'storage',
                                          'resources': {'DISK_GB': 1}}]},
     'spec.resource_groups[1].name'),
    ({'resource_groups': [{'name': 'a'}, {'name': 'b'}]},
     'spec.resource_groups'),
    ({'locality': [{'groups': ['compute', 'nope'], 'scope': 'rack'}]},
     'spec.locality[0].groups'),
    ({'locality': [{'groups': ['compute', 'volume'], 'scope': 'rack',
                    'policy': 'near'}]}, 'spec.locality[0].policy'),
    ({'locality': [{'groups': ['compute', 'volume'], 'scope': 'Rack'}]},
     'spec.locality[0].scope'),
])
def test_validation_names_the_bad_field(changes, field):
    with pytest.raises(exception.InvalidField) as exc:
        test_schemas.check('select_destinations', spec_obj=_spec(**changes))
    assert exc.value.kwargs['field'] == field.replace('spec.', 'spec_obj.')


@pytest.mark.parametrize('changes, field', [
    ({'resource_groups': [{'name': 'a', 'kind': 'storage',
                           'resources': {'DISK': 1}}]},
     'spec.resource_groups[0].resources.DISK'),
    ({'resource_groups': [{'name': 'a', 'kind': 'storage'}]},
     'spec.resource_groups[0].resources'),
    ({'locality': [{'groups': ['compute', 'nope'], 'scope': 'rack'}]},
     'spec.locality[0].groups'),
])
def test_the_client_check_names_the_bad_field(changes, field):
    with pytest.raises(exception.InvalidField) as exc:
        resource_groups.validate(_spec(**changes), 'spec')
    assert exc.value.kwargs['field'] == field


def test_provider_for():
    selection = objects.Selection(
        host='h1', nodename='n1', compute_node_uuid=UUID1,
        providers={'compute': ['h1', 'n1', UUID1],
                   'volume': ['cinder1', 'pool1', UUID1]})
    assert selection.provider_for('volume') == ('cinder1', 'pool1', UUID1)
    with pytest.raises(KeyError):
        selection.provider_for('port')
    classic = objects.Selection(host='h1', nodename='n1',
                                compute_node_uuid=UUID1)
    assert classic.provider_for('compute') == ('h1', 'n1', UUID1)
    data = selection.obj_to_primitive(target_version='1.0')[
        'scheduler_object.data']
    assert 'providers' not in data
