"""Nova 34's own payloads are accepted: its legacy request dicts in every
serialization, a whole RequestSpec primitive, and (test_nova_reports.py)
its tracker reports. Fields nova sends that the scheduler does not use are
dropped with a debug line; a field nobody sends is still an error."""

import copy
import logging

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.model.request_state import RequestState
from tests.unit.fixtures.nova import legacy_requests as nova

CASES = list(nova.cases())


def _check(spec, expect):
    flavor = spec.flavor
    for key in ('vcpus', 'memory_mb', 'root_gb', 'ephemeral_gb', 'swap'):
        if key in expect:
            assert getattr(flavor, key) == expect[key], key
    for key, value in expect.get('extra_specs', {}).items():
        assert flavor.extra_specs[key] == value
    simple = {'num_instances': 'num_instances',
              'availability_zone': 'availability_zone',
              'ignore_hosts': 'ignore_hosts', 'force_hosts': 'force_hosts',
              'instance_uuids': 'instance_uuids', 'hints': 'scheduler_hints'}
    for key, field in simple.items():
        if key in expect:
            assert spec.get(field) == expect[key], key
    if 'group' in expect:
        group = spec.instance_group
        assert (group.policy if group else None) == expect['group']
        if expect.get('group_hosts'):
            assert group.hosts == expect['group_hosts']
    if 'retry_hosts' in expect:
        assert spec.retry.hosts == expect['retry_hosts']
    if 'destination' in expect:
        dest = spec.requested_destination
        assert (dest.host, dest.node) == expect['destination']


@pytest.mark.parametrize('request_spec, filter_properties, expect',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_legacy_dicts_nova_produces_are_accepted(request_spec,
                                                 filter_properties, expect):
    spec = objects.RequestSpec.from_primitives(request_spec,
                                               filter_properties)
    _check(spec, expect)
    # and the scheduler can plan with it
    assert RequestState.from_spec(spec).resources


def test_every_legacy_request_is_covered():
    assert len(CASES) == 18


def test_ignored_fields_are_logged_at_debug(caplog):
    request = nova.REQUESTS['boot one small server']
    with caplog.at_level(logging.DEBUG, 'scheduler.objects.nova_compat'):
        objects.RequestSpec.from_primitives(
            nova.as_json(request['request_spec']),
            request['filter_properties'])
    text = caplog.text
    assert 'rxtx_factor' in text and 'vcpu_weight' in text
    assert 'request_spec.instance_type' in text


@pytest.mark.parametrize('where, key', [
    ('request_spec', 'instance_typo'),
    ('filter_properties', 'scheduler_hint'),
    ('flavor', 'vcpu'),
])
def test_fields_nobody_sends_stay_errors(where, key):
    request = copy.deepcopy(nova.REQUESTS['boot one small server'])
    spec = nova.primitive(request['request_spec'])
    props = request['filter_properties']
    if where == 'flavor':
        spec['instance_type'][key] = 1
        field = 'request_spec.instance_type.' + key
    elif where == 'request_spec':
        spec[key] = 1
        field = 'request_spec.' + key
    else:
        props[key] = 1
        field = 'filter_properties.' + key
    with pytest.raises(exception.InvalidField) as info:
        objects.RequestSpec.from_primitives(spec, props)
    assert info.value.kwargs['field'] == field


def test_nova_request_spec_primitive():
    spec = objects.RequestSpec.from_nova(copy.deepcopy(nova.REQUEST_SPEC))
    assert (spec.flavor.vcpus, spec.num_instances) == (4, 2)
    assert spec.instance_uuids == [nova.UUIDS[0]]
    assert spec.instance_group.policy == 'anti-affinity'
    assert spec.instance_group.rules == {'max_server_per_host': '2'}
    assert spec.retry.hosts == [['compute-02', 'compute-02.example.org']]
    assert spec.image.properties['hw_cpu_policy'] == 'dedicated'
    assert spec.is_bfv is False
    # dedicated CPUs are asked for as PCPU, as nova asks placement
    assert RequestState.from_spec(spec).resources == {
        rcs.PCPU: 4, rcs.MEMORY_MB: 8192, rcs.DISK_GB: 40}


def test_nova_request_spec_with_an_unknown_field_is_refused():
    primitive = copy.deepcopy(nova.REQUEST_SPEC)
    primitive['nova_object.data']['flavour'] = {}
    with pytest.raises(exception.InvalidField) as info:
        objects.RequestSpec.from_nova(primitive)
    assert info.value.kwargs['field'] == 'spec_obj.flavour'
