"""SchedulerClient's 1.2 casts: dicts become objects, a bad element raises
InvalidField naming it before anything is sent, and ``[upgrade_levels]
scheduler = 1.1`` refuses the 1.2 methods on the client.

The transport's ``_send`` is replaced by a recorder, so these tests see
each message as it would go on the wire.
"""

from unittest import mock

import pytest

from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.client import SchedulerClient

A1 = '1a2b3c4d-0000-4000-8000-000000000001'
A2 = '1a2b3c4d-0000-4000-8000-000000000002'
I1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])
SERIALIZER = objects.SchedulerObjectSerializer()


@pytest.fixture
def sent(transport):
    """Cast messages handed to the transport, arguments deserialized."""
    messages = []

    def record(target, ctxt, message, wait_for_reply=None, **kwargs):
        assert not wait_for_reply
        args = {k: SERIALIZER.deserialize_entity(None, v)
                for k, v in message['args'].items()}
        messages.append((message['method'], message['version'], args))

    with mock.patch.object(transport, '_send', side_effect=record):
        yield messages


@pytest.fixture
def client(conf, transport):
    return SchedulerClient(conf, transport=transport)


def test_update_aggregates_accepts_dicts_and_objects(client, sent):
    client.update_aggregates(CTXT, [
        {'uuid': A1, 'name': 'fast', 'hosts': ['h1'],
         'metadata': {'ssd': 'true'}},
        objects.Aggregate(uuid=A2, hosts=['h2'])])
    [(method, version, args)] = sent
    assert (method, version) == ('update_aggregates', '1.2')
    first, second = args['aggregates']
    assert isinstance(first, objects.Aggregate)
    assert (first.uuid, first.name, first.hosts, first.metadata) == \
        (A1, 'fast', ['h1'], {'ssd': 'true'})
    # unset fields travel with their defaults
    assert (second.uuid, second.name, second.hosts, second.metadata) == \
        (A2, None, ['h2'], {})


def test_update_instance_info_accepts_one_or_many(client, sent):
    client.update_instance_info(CTXT, 'h1', {
        'uuid': I1, 'project_id': 'p1',
        'flavor': {'vcpus': 1, 'memory_mb': 512, 'name': 'tiny'}})
    client.update_instance_info(CTXT, 'h1', [objects.InstanceInfo(uuid=I1)])
    assert [(m, v) for m, v, _ in sent] == \
        [('update_instance_info', '1.2')] * 2
    [info] = sent[0][2]['instance_info']
    assert sent[0][2]['host'] == 'h1'
    assert isinstance(info, objects.InstanceInfo)
    assert (info.uuid, info.project_id, info.flavor.name) == \
        (I1, 'p1', 'tiny')


BAD_ELEMENTS = [
    # (id, method, args, field named)
    ('aggregate neither dict nor object', 'update_aggregates',
     ([{'uuid': A1}, 'fast'],), 'aggregates[1]'),
    ('unknown aggregate key', 'update_aggregates',
     ([{'uuid': A1, 'zone': 'az1'}],), 'aggregates[0].zone'),
    ('ill-typed hosts', 'update_aggregates',
     ([{'uuid': A1, 'hosts': 'h1'}],), 'aggregates[0].hosts'),
    ('aggregate without uuid', 'update_aggregates',
     ([{'uuid': A1}, {'name': 'x'}],), 'aggregates[1].uuid'),
    ('aggregate object without uuid', 'update_aggregates',
     ([objects.Aggregate(name='x')],), 'aggregates[0].uuid'),
    ('instance info neither dict nor object', 'update_instance_info',
     ('h1', [{'uuid': I1}, 7]), 'instance_info[1]'),
    ('unknown instance key', 'update_instance_info',
     ('h1', {'uuid': I1, 'state': 'active'}), 'instance_info[0].state'),
    ('ill-typed flavor field', 'update_instance_info',
     ('h1', {'uuid': I1, 'flavor': {'vcpus': 'x', 'memory_mb': 1}}),
     'instance_info[0].flavor.vcpus'),
    ('instance info without uuid', 'update_instance_info',
     ('h1', [{'project_id': 'p1'}]), 'instance_info[0].uuid'),
    ('delete aggregate: not a uuid', 'delete_aggregate', ('fast',),
     'aggregate'),
    ('delete aggregate without uuid', 'delete_aggregate',
     (objects.Aggregate(name='x'),), 'aggregate'),
    ('delete instance: not a uuid', 'delete_instance_info',
     ('h1', 'vm-1'), 'instance_uuid'),
    ('delete instance: no host', 'delete_instance_info', (None, I1),
     'host'),
    ('build failed: bad name', 'build_failed', (['h1'],), 'name'),
]


@pytest.mark.parametrize('method, args, field',
                         [c[1:] for c in BAD_ELEMENTS],
                         ids=[c[0] for c in BAD_ELEMENTS])
def test_bad_element_raises_before_sending(client, sent, method, args,
                                           field):
    with pytest.raises(exception.InvalidField) as info:
        getattr(client, method)(CTXT, *args)
    assert info.value.kwargs['field'] == field
    assert isinstance(info.value, ValueError)
    assert sent == []


CASTS = [
    ('delete_aggregate', (objects.Aggregate(uuid=A1),), {'aggregate': A1}),
    ('delete_aggregate', (A1,), {'aggregate': A1}),
    ('delete_instance_info', ('h1', I1),
     {'host': 'h1', 'instance_uuid': I1}),
    ('build_failed', ('h1',), {'name': 'h1'}),
    ('build_failed', (('h1', 'n1'),), {'name': ['h1', 'n1']}),
]


@pytest.mark.parametrize('method, args, wire_args', CASTS)
def test_casts_at_1_2(client, sent, method, args, wire_args):
    getattr(client, method)(CTXT, *args)
    assert sent == [(method, '1.2', wire_args)]


CAPPED = [
    ('update_aggregates', ([{'uuid': A1}],)),
    ('delete_aggregate', (A1,)),
    ('update_instance_info', ('h1', [{'uuid': I1}])),
    ('delete_instance_info', ('h1', I1)),
    ('build_failed', ('h1',)),
]


@pytest.mark.parametrize('method, args', CAPPED, ids=[c[0] for c in CAPPED])
def test_cap_at_1_1_refuses_1_2_methods(conf, transport, sent, method,
                                        args):
    conf.set_override('scheduler', '1.1', 'upgrade_levels')
    capped = SchedulerClient(conf, transport=transport)
    assert not capped.api.client.can_send_version('1.2')
    with pytest.raises(exception.InvalidRequest) as info:
        getattr(capped, method)(CTXT, *args)
    assert sent == []
    message = str(info.value)
    assert method in message and '1.2' in message and '1.1' in message
    # 1.1 methods still go out
    capped.delete_allocations(CTXT, I1)
    assert [(m, v) for m, v, _ in sent] == [('delete_allocations', '1.1')]
