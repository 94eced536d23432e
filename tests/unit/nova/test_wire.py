"""nova's scheduler RPC primitives, read and written (``scheduler.nova.wire``).

The messages below are those nova 34.0.0's ``SchedulerAPI`` sends
(recorded from its serializer, uuids and timestamps fixed), written with
``tests.unit.fixtures.nova.envelope.obj``; ``test_endpoint`` sends
them through the dispatcher and ``tests/functional/test_nova_client.py``
runs nova's own client.
"""

import copy
import datetime
import json

from oslo_messaging._drivers import common as om_common
import pytest

from scheduler import exception
from scheduler import objects
from scheduler.nova import wire as nova_wire
from tests.unit.fixtures.nova.envelope import obj

UUIDS = ['1c8a1f54-3b47-4c2e-9d0b-6a1e8c3d5f%02d' % i for i in range(4)]
GROUP = '902818f1-0b88-4e87-9fb0-880fbd281477'
AGGREGATE = '6f7b1e2a-0c44-4d0b-9a7e-3f2c1d0e9b8a'
NODE = '3f1e2d4c-5b6a-4789-8a0b-1c2d3e4f5a6b'

#: nova's RequestContext.to_dict of a member's boot request
CONTEXT = {
    'auth_token': None, 'domain': None, 'global_request_id': None,
    'is_admin': False, 'is_admin_project': True, 'project':
    'demo-project', 'project_domain': None, 'project_id': 'demo-project',
    'project_name': None, 'quota_class': None, 'read_deleted': 'no',
    'read_only': False, 'remote_address': None,
    'request_id': 'req-0c33bb80-e7d8-4dac-ab5f-5d126972ea91',
    'resource_uuid': None, 'roles': ['member', 'reader'],
    'service_catalog': [], 'show_deleted': False, 'system_scope': None,
    'timestamp': '2026-11-25T01:53:37.731511', 'user': 'demo-user',
    'user_domain': None, 'user_id': 'demo-user',
    'user_identity': 'demo-user demo-project - - -', 'user_name': None}

FLAVOR = obj('Flavor', '1.2', description=None, disabled=False,
             ephemeral_gb=0, extra_specs={}, flavorid='1', id=1,
             is_public=True, memory_mb=512, name='f-1-512', root_gb=1,
             rxtx_factor=1.0, swap=0, vcpu_weight=0, vcpus=1)


def spec_obj(policy='anti-affinity', num_instances=2):
    """nova's RequestSpec 1.15 primitive (from_components)."""
    image_props = obj('ImageMetaProps', '1.44')
    del image_props['nova_object.changes']
    return obj(
        'RequestSpec', '1.15', availability_zone=None, flavor=FLAVOR,
        force_hosts=None, force_nodes=None, ignore_hosts=None,
        image=obj('ImageMeta', '1.8',
                  id='9234aa9a-b436-4295-9e88-f5992da5e876', min_disk=0,
                  min_ram=0, name='cirros', properties=image_props),
        instance_group=obj(
            'InstanceGroup', '1.11', _rules={}, hosts=[], members=[],
            name='group-' + policy, policy=policy,
            project_id='demo-project', user_id='demo-user', uuid=GROUP)
        if policy else None,
        instance_uuid=UUIDS[0],
        limits=obj('SchedulerLimits', '1.0', disk_gb=None, memory_mb=None,
                   numa_topology=None, vcpu=None),
        num_instances=num_instances, numa_topology=None,
        pci_requests=obj('InstancePCIRequests', '1.1', requests=[]),
        project_id='demo-project',
        request_level_params=obj('RequestLevelParams', '1.1'),
        requested_destination=None, requested_resources=[], retry=None,
        scheduler_hints={}, user_id='demo-user')


def select_args(pin, **spec_kwargs):
    """The arguments of select_destinations at RPC ``pin``, as nova's
    rpcapi steps them down (a copy each time)."""
    if pin == '4.0':
        return copy.deepcopy(legacy_args(**spec_kwargs))
    spec = copy.deepcopy(spec_obj(**spec_kwargs))
    uuids = UUIDS[:spec['nova_object.data']['num_instances']]
    return {'4.3': {'spec_obj': spec},
            '4.4': {'spec_obj': spec, 'instance_uuids': uuids},
            '4.5': {'spec_obj': spec, 'instance_uuids': uuids,
                    'return_objects': True,
                    'return_alternates': True}}[pin]


def legacy_args(policy='anti-affinity', num_instances=2):
    """4.0: to_legacy_request_spec_dict and _filter_properties_dict."""
    props = {'limits': {}}
    if policy:
        props.update(group_hosts=[], group_members=[],
                     group_policies=[policy], group_updated=True,
                     group_uuid=GROUP)
    return {'filter_properties': props, 'request_spec': {
        'image': {'id': 'e5b0324b-53f6-4ccd-8fa5-88bd353f5dee',
                  'min_disk': 0, 'min_ram': 0, 'name': 'cirros',
                  'properties': {}},
        'instance_properties': {
            'availability_zone': None, 'ephemeral_gb': 0,
            'memory_mb': 512, 'numa_topology': None,
            'pci_requests': obj('InstancePCIRequests', '1.1', requests=[]),
            'project_id': 'demo-project', 'root_gb': 1,
            'user_id': 'demo-user', 'uuid': UUIDS[0], 'vcpus': 1},
        'instance_type': FLAVOR, 'num_instances': num_instances}}


NOVA_AGGREGATE = obj('Aggregate', '1.3', hosts=['compute-02'], id=1,
                     metadata={'availability_zone': 'az1'}, name='agg1',
                     uuid=AGGREGATE)

#: the five casts (fanout) as nova 34 sends them
CASTS = {
    'update_aggregates': {'aggregates': [NOVA_AGGREGATE]},
    'delete_aggregate': {'aggregate': NOVA_AGGREGATE},
    'update_instance_info': {
        'host_name': 'compute-02',
        'instance_info': obj('InstanceList', '2.6', objects=[obj(
            'Instance', '2.8', flavor=FLAVOR, host='compute-02',
            node='compute-02', project_id='demo-project', task_state=None,
            user_id='demo-user', uuid=UUIDS[0], vm_state='active')])},
    'delete_instance_info': {'host_name': 'compute-02',
                             'instance_uuid': UUIDS[0]},
    'sync_instance_info': {'host_name': 'compute-02',
                           'instance_uuids': UUIDS[:2]},
}


# -- in ---------------------------------------------------------------------

@pytest.mark.parametrize('pin', ['4.0', '4.3', '4.4', '4.5'])
def test_every_pin_reads_into_the_same_request(pin):
    args = select_args(pin)
    spec = nova_wire.request_spec(args.get('spec_obj'),
                                  args.get('request_spec'),
                                  args.get('filter_properties'))
    assert (spec.flavor.vcpus, spec.flavor.memory_mb,
            spec.flavor.root_gb) == (1, 512, 1)
    assert spec.num_instances == 2
    assert spec.instance_group.policy == 'anti-affinity'
    assert spec.instance_group.uuid == GROUP
    assert spec.project_id == 'demo-project'


def test_consumers_before_4_4_complete_the_one_nova_names():
    spec = nova_wire.request_spec(spec_obj(num_instances=3))
    new = iter(['gen-1', 'gen-2'])
    assert nova_wire.consumers(spec, None, lambda: next(new)) == [
        UUIDS[0], 'gen-1', 'gen-2']
    assert nova_wire.consumers(spec, UUIDS[:3], None) == UUIDS[:3]


def test_a_spec_obj_that_is_not_nova_s_is_refused_by_name():
    with pytest.raises(exception.InvalidField, match='spec_obj'):
        nova_wire.request_spec({'vcpus': 1})
    with pytest.raises(exception.InvalidField, match='spec_obj: missing'):
        nova_wire.request_spec()


def test_unknown_argument_is_refused_by_name():
    nova_wire.check_arguments('select_destinations', select_args('4.5'))
    with pytest.raises(exception.InvalidField, match='host_name'):
        nova_wire.check_arguments('select_destinations',
                                  {'host_name': 'x'})


CELL = 'c0ffee00-0000-4000-8000-000000000001'


def cell_destination(cell=CELL, **fields):
    """nova's Destination 1.4 of a resize (``MigrationTask.
    _set_requested_destination_cell``): the instance's CellMapping."""
    return obj('Destination', '1.4', cell=obj(
        'CellMapping', '1.1', id=1, uuid=cell, name='cell1',
        transport_url='rabbit://nova:secret@rabbit/cell1',
        database_connection='mysql+pymysql://nova:secret@db/cell1',
        disabled=False), **fields)


def resize_args(pin, destination, source='compute-01', memory_mb=1024):
    """select_destinations of a resize at ``pin``: the instance's spec
    with a new flavor (2 VCPUs, ``memory_mb``, 2 GB of disk), its host
    in ``ignore_hosts`` (no ``allow_resize_to_same_host``) and
    ``destination``."""
    args = select_args(pin, policy=None, num_instances=1)
    flavor = obj('Flavor', '1.2', **dict(
        FLAVOR['nova_object.data'], id=2, flavorid='2', name='f-2',
        vcpus=2, memory_mb=memory_mb, root_gb=2))
    if pin == '4.0':
        args['filter_properties'].update(
            ignore_hosts=[source], requested_destination=destination)
        args['request_spec']['instance_type'] = flavor
        args['request_spec']['instance_properties'].update(
            vcpus=2, memory_mb=memory_mb, root_gb=2)
    else:
        args['spec_obj']['nova_object.data'].update(
            flavor=flavor, ignore_hosts=[source],
            requested_destination=destination)
    return args


def _read(args, cell_uuid=CELL):
    return nova_wire.request_spec(
        args.get('spec_obj'), args.get('request_spec'),
        args.get('filter_properties'), cell_uuid)


@pytest.mark.parametrize('pin', ['4.0', '4.3', '4.4', '4.5'])
def test_a_resize_s_cell_only_destination_restricts_nothing(pin):
    spec = _read(resize_args(pin, cell_destination()))
    assert spec.requested_destination is None
    assert spec.ignore_hosts == ['compute-01']
    assert (spec.flavor.vcpus, spec.flavor.memory_mb) == (2, 1024)
    assert nova_wire.named_consumers(spec, None) == [UUIDS[0]]


@pytest.mark.parametrize('pin', ['4.0', '4.5'])
def test_a_request_confined_to_another_cell_has_no_host_here(pin):
    other = '0ff1ce00-0000-4000-8000-000000000002'
    with pytest.raises(nova_wire.NoValidHost) as caught:
        _read(resize_args(pin, cell_destination(other)))
    assert other in caught.value.kwargs['reason']
    assert CELL in caught.value.kwargs['reason']
    # the other cell only preferred: any host here will do
    spec = _read(resize_args(pin, cell_destination(
        other, allow_cross_cell_move=True)))
    assert spec.requested_destination is None


def test_a_destination_with_a_host_is_kept():
    spec = _read(resize_args('4.5', cell_destination(
        host='compute-02', node='compute-02')))
    assert (spec.requested_destination.host,
            spec.requested_destination.node) == ('compute-02',
                                                 'compute-02')


def test_casts_read_into_the_scheduler_s_objects():
    [agg] = nova_wire.aggregates(CASTS['update_aggregates']['aggregates'])
    assert (agg.uuid, agg.name, agg.hosts, agg.metadata) == (
        AGGREGATE, 'agg1', ['compute-02'], {'availability_zone': 'az1'})
    assert nova_wire.aggregate_uuid(NOVA_AGGREGATE) == AGGREGATE
    [info] = nova_wire.instance_infos(
        'compute-02', CASTS['update_instance_info']['instance_info'])
    assert isinstance(info, objects.InstanceInfo)
    assert (info.uuid, info.host, info.node, info.project_id,
            info.flavor.vcpus) == (UUIDS[0], 'compute-02', 'compute-02',
                                   'demo-project', 1)


def test_a_bare_instance_is_one_instance():
    instance = obj('Instance', '2.8', uuid=UUIDS[1], host='h')
    [info] = nova_wire.instance_infos('h', instance)
    assert info.uuid == UUIDS[1] and info.flavor is None


# -- out --------------------------------------------------------------------

def _selection(host, uuid, alternate=False):
    return objects.Selection(
        host=host, nodename=host, compute_node_uuid=uuid,
        allocation={} if alternate else {'VCPU': 1, 'MEMORY_MB': 512},
        limits={'VCPU': 64, 'MEMORY_MB': 49152, 'DISK_GB': 400},
        is_alternate=alternate)


SELECTIONS = [[_selection('compute-01', NODE),
               _selection('compute-02', UUIDS[3], alternate=True)]]


def test_objects_are_nova_selection_1_1_primitives():
    [[first, alternate]] = nova_wire.answer(
        SELECTIONS, True, 'c0ffee00-0000-4000-8000-000000000001',
        lambda sel: 'az-' + sel.host)
    assert first['nova_object.name'] == 'Selection'
    assert first['nova_object.namespace'] == 'nova'
    assert first['nova_object.version'] == '1.1'
    data = first['nova_object.data']
    assert sorted(data) == sorted(first['nova_object.changes']) == [
        'allocation_request', 'allocation_request_version',
        'availability_zone', 'cell_uuid', 'compute_node_uuid', 'limits',
        'nodename', 'service_host']
    assert (data['service_host'], data['compute_node_uuid'],
            data['availability_zone']) == ('compute-01', NODE,
                                           'az-compute-01')
    limits = data['limits']
    assert (limits['nova_object.name'], limits['nova_object.data']) == (
        'SchedulerLimits', {'vcpu': 64, 'memory_mb': 49152,
                            'disk_gb': 400, 'numa_topology': None})
    request = json.loads(data['allocation_request'])
    assert request == {'allocations': {NODE: {'resources': {
        'VCPU': 1, 'MEMORY_MB': 512}}}, 'mappings': {'': [NODE]}}
    assert data['allocation_request_version'] == '1.36'
    # an alternate carries the request nova's conductor claims with
    alt = json.loads(
        alternate['nova_object.data']['allocation_request'])
    assert alt['allocations'] == {UUIDS[3]: {'resources': {
        'VCPU': 1, 'MEMORY_MB': 512}}}


def test_host_dicts_are_nova_s_selection_to_dict():
    assert nova_wire.answer(SELECTIONS, False, None, None) == [
        {'host': 'compute-01', 'nodename': 'compute-01',
         'limits': {'vcpu': 64, 'memory_mb': 49152, 'disk_gb': 400}}]


def test_no_valid_host_is_sent_as_nova_s_exception():
    error = nova_wire.NoValidHost('2 hosts, 2 removed by RamFilter')
    sent = json.loads(om_common.serialize_remote_exception(
        (type(error), error, None)))
    assert (sent['module'], sent['class']) == ('nova.exception',
                                               'NoValidHost')
    assert sent['kwargs'] == {'reason': '2 hosts, 2 removed by RamFilter'}
    assert sent['args'] == ['No valid host was found. 2 hosts, 2 removed '
                            'by RamFilter']
    assert isinstance(error, exception.NoValidHost)


def test_serializer_reads_nova_s_context_and_grants_roles():
    serializer = nova_wire.NovaSerializer(['service'])
    ctxt = serializer.deserialize_context(dict(CONTEXT))
    assert (ctxt.user_id, ctxt.project_id) == ('demo-user', 'demo-project')
    assert ctxt.roles == ['member', 'reader', 'service']
    assert not ctxt.is_admin_caller
    # every worker's copy of a fanout cast carries nova's one stamp
    assert ctxt.sent_at == datetime.datetime(2026, 11, 25, 1, 53, 37,
                                             731511)
    assert serializer.deserialize_context(
        dict(CONTEXT, timestamp=None)).sent_at is None
    plain = nova_wire.NovaSerializer([]).deserialize_context(CONTEXT)
    assert plain.roles == ['member', 'reader']
    # nova's primitives stay the dicts the endpoint reads
    spec = spec_obj()
    assert serializer.deserialize_entity(ctxt, spec) == spec
