"""SchedulerAPI sends each method with the right name, version and
arguments, and ``[upgrade_levels] scheduler`` keeps newer methods from
reaching an old server.

The transport's ``_send`` is replaced by a recorder, so these tests see the
message as it would go on the wire (arguments already serialized).
"""

import re
from unittest import mock

import pytest

from scheduler import context as sched_context
from scheduler import exception
from scheduler import manager
from scheduler import objects
from scheduler.client import rpcapi

from .. import fakes

UUID1 = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5f'
NODE_UUID = '7a2c4d3f-2e3b-4d6c-8f9a-1b2c3d4e5f60'
SERIALIZER = objects.SchedulerObjectSerializer()


@pytest.fixture
def sent(transport):
    """Messages handed to the transport: (target, context, message, call?).
    A call is answered with one serialized Selection list."""
    messages = []
    answer = SERIALIZER.serialize_entity(None, [[objects.Selection(
        host='h1', compute_node_uuid=NODE_UUID)]])

    def record(target, ctxt, message, wait_for_reply=None, **kwargs):
        messages.append((target, ctxt, message, bool(wait_for_reply)))
        return answer if wait_for_reply else None

    with mock.patch.object(transport, '_send', side_effect=record):
        yield messages


def _api(conf, transport, cap=None):
    if cap is not None:
        conf.set_override('scheduler', cap, 'upgrade_levels')
    return rpcapi.SchedulerAPI(conf, transport)


CTXT = sched_context.RequestContext(project_id='p1', user_id='u1',
                                    roles=['service'])


def _spec():
    return objects.RequestSpec(
        flavor=objects.Flavor(vcpus=1, memory_mb=512), num_instances=1)


def test_select_destinations_is_a_call_at_1_0(conf, transport, sent):
    spec = _spec()
    result = _api(conf, transport).select_destinations(
        CTXT, spec, [UUID1], return_alternates=True)
    assert result[0][0].host == 'h1'
    [(target, ctxt, message, is_call)] = sent
    assert is_call
    assert target.topic == conf.scheduler.topic == 'scheduler'
    assert ctxt['project_id'] == 'p1'
    assert message['method'] == 'select_destinations'
    assert message['version'] == '1.0'
    assert fakes.sorted_changes(message['args']) == fakes.sorted_changes({
        'spec_obj': SERIALIZER.serialize_entity(None, spec),
        'instance_uuids': [UUID1], 'return_alternates': True})


def test_update_resource_stats_is_a_cast_at_1_0(conf, transport, sent):
    node = objects.ComputeNode(host='h1', vcpus=4)
    assert _api(conf, transport).update_resource_stats(
        CTXT, ['h1', 'n1'], node) is None
    [(_, _, message, is_call)] = sent
    assert not is_call
    assert (message['method'], message['version']) == (
        'update_resource_stats', '1.0')
    assert fakes.sorted_changes(message['args']) == fakes.sorted_changes({
        'name': ['h1', 'n1'],
        'stats': SERIALIZER.serialize_entity(None, node)})


CASTS = [
    ('delete_allocations', '1.1', (UUID1,), {'consumer_uuid': UUID1}),
    ('sync_instance_info', '1.1', ('h1', [UUID1]),
     {'host': 'h1', 'instance_uuids': [UUID1]}),
]


@pytest.mark.parametrize('method, version, args, wire_args', CASTS,
                         ids=[c[0] for c in CASTS])
def test_later_methods_are_casts_at_their_version(conf, transport, sent,
                                                  method, version, args,
                                                  wire_args):
    getattr(_api(conf, transport), method)(CTXT, *args)
    [(_, _, message, is_call)] = sent
    assert not is_call
    assert message == {'method': method, 'version': version,
                       'args': wire_args}


@pytest.mark.parametrize('method, version, args, wire_args', CASTS,
                         ids=[c[0] for c in CASTS])
def test_cap_at_1_0_refuses_newer_methods(conf, transport, sent, method,
                                          version, args, wire_args):
    api = _api(conf, transport, cap='1.0')
    with pytest.raises(exception.InvalidRequest) as info:
        getattr(api, method)(CTXT, *args)
    assert sent == []
    message = str(info.value)
    assert method in message and version in message and '1.0' in message


def test_cap_at_1_0_still_sends_1_0_methods(conf, transport, sent):
    api = _api(conf, transport, cap='1.0')
    assert api.select_destinations(CTXT, _spec(), None)[0][0].host == 'h1'
    api.update_resource_stats(CTXT, 'h1', objects.ComputeNode(host='h1'))
    assert [(m['method'], m['version']) for _, _, m, _ in sent] == [
        ('select_destinations', '1.0'), ('update_resource_stats', '1.0')]


def test_cap_at_1_1_sends_1_1_methods(conf, transport, sent):
    _api(conf, transport, cap='1.1').delete_allocations(CTXT, UUID1)
    assert sent[0][2]['version'] == '1.1'


def test_no_cap_sends_the_newest_version(conf, transport):
    api = _api(conf, transport)
    assert api.version_cap is None
    assert api.client.can_send_version(rpcapi.RPC_API_VERSION)


def test_docstring_is_the_version_history():
    versions = re.findall(r'^\* (\d+\.\d+) - ', rpcapi.__doc__, re.MULTILINE)
    assert versions[:2] == ['1.0', '1.1']
    as_tuples = [tuple(int(p) for p in v.split('.')) for v in versions]
    assert as_tuples == sorted(set(as_tuples)), 'one entry per version'
    assert versions[-1] == rpcapi.RPC_API_VERSION


def test_server_accepts_what_the_client_sends():
    assert manager.SchedulerManager.target.version == rpcapi.RPC_API_VERSION
