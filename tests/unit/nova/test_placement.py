"""Claims written back to Placement (``scheduler.nova.placement``):
nova's messages through NovaDispatcher and a real SchedulerManager on
SQLite, with a fake Placement session that answers what it is scripted
to and records every request.
"""

import json

import pytest
from keystoneauth1 import exceptions as ks_exc

from scheduler.db import claims
from scheduler import exception
from scheduler.nova import endpoint as nova_endpoint
from scheduler.nova import placement as nova_placement
from scheduler.nova import wire as nova_wire
from scheduler.edge import validation
from tests.unit.nova import test_wire as recorded
from tests.unit.nova.test_endpoint import CELL
from tests.unit.nova.test_endpoint import manager  # noqa: F401
from tests.unit.nova.test_endpoint import send

CONFLICT = {'errors': [{'code': 'placement.undefined', 'detail': (
    'Unable to allocate inventory: capacity exceeded')}]}


def _consumer_conflict(generation):
    return {'errors': [{'code': 'placement.concurrent_update', 'detail': (
        'consumer generation conflict - expected null but got %d'
        % generation)}]}


class Response:

    def __init__(self, status_code, body=None):
        self.status_code = status_code
        self.body = body
        self.text = json.dumps(body)

    def json(self):
        return self.body


class FakePlacement:
    """keystoneauth1's Adapter as the writer uses it: each PUT answers
    the next of ``puts`` (then 204), GET and DELETE from ``gets``."""

    def __init__(self, puts=(), gets=None, fail=None):
        self.puts = list(puts)
        self.gets = gets or {}
        self.fail = fail
        self.sent = []

    def _answer(self, method, url, json, microversion):
        assert microversion == nova_wire.ALLOCATION_REQUEST_VERSION
        self.sent.append((method, url, json))
        if self.fail:
            raise self.fail
        if method == 'put':
            return self.puts.pop(0) if self.puts else Response(204)
        if method == 'delete':
            return Response(204)
        answer = self.gets[url]
        # a list: one answer per request, in turn
        return answer.pop(0) if isinstance(answer, list) else answer

    def put(self, url, json=None, microversion=None, raise_exc=True):
        return self._answer('put', url, json, microversion)

    def get(self, url, json=None, microversion=None, raise_exc=True):
        return self._answer('get', url, json, microversion)

    def delete(self, url, json=None, microversion=None, raise_exc=True):
        return self._answer('delete', url, json, microversion)

    def calls(self, method):
        return [(url, body) for m, url, body in self.sent if m == method]


@pytest.fixture
def nova_with(conf, manager):  # noqa: F811
    conf.set_override('cell_uuid', CELL, 'nova')
    conf.set_override('max_attempts', 2, 'scheduler')

    def build(placement):
        return nova_endpoint.NovaEndpoint(
            conf, manager, validation.EdgeCheck(conf.limits),
            nova_placement.AllocationWriter(placement))
    return build


def _boot(nova, num_instances=1, pin='4.5'):
    args = recorded.select_args(pin, policy=None,
                                num_instances=num_instances)
    return send(nova, 'select_destinations', pin, args)


def _first(answer):
    return answer[0][0]['nova_object.data']


def test_allocation_written_before_the_answer(nova_with, db):
    placement = FakePlacement()
    chosen = _first(_boot(nova_with(placement)))
    [(url, body)] = placement.calls('put')
    assert url == '/allocations/%s' % recorded.UUIDS[0]
    assert body == {
        'allocations': {chosen['compute_node_uuid']: {'resources': {
            'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}},
        'consumer_generation': None, 'project_id': 'demo-project',
        'user_id': 'demo-user'}
    # the answer's allocation request is what was written
    assert json.loads(chosen['allocation_request'])['allocations'] == \
        body['allocations']
    [claim_host] = {a['host'] for a in claims.list_allocations(db)}
    assert claim_host == chosen['service_host']


def test_refused_then_replanned_on_another_host(nova_with, db):
    placement = FakePlacement(puts=[Response(409, CONFLICT)])
    chosen = _first(_boot(nova_with(placement)))
    first, second = placement.calls('put')
    assert first[1]['allocations'] != second[1]['allocations']
    assert list(second[1]['allocations']) == [chosen['compute_node_uuid']]
    # the claim followed the new plan: none left on the refused host
    assert {(a['consumer_uuid'], a['host'])
            for a in claims.list_allocations(db)} == {
        (recorded.UUIDS[0], chosen['service_host'])}


@pytest.mark.parametrize('replans', [nova_placement.REPLANS, 1])
def test_refused_every_time_is_no_valid_host_and_no_claim(nova_with, db,
                                                          replans, caplog):
    caplog.set_level('INFO')
    placement = FakePlacement(puts=[Response(409, CONFLICT)] * 5)
    nova = nova_with(placement)
    nova.write_back.replans = replans
    with pytest.raises(nova_wire.NoValidHost):
        _boot(nova)
    assert 'capacity exceeded' in caplog.text
    # two hosts: each refused once, then none left, or no plan left
    assert len(placement.calls('put')) == 2
    assert claims.list_allocations(db) == []


def test_placement_down_is_no_valid_host_without_a_new_plan(nova_with, db,
                                                            caplog):
    caplog.set_level('INFO')
    placement = FakePlacement(fail=ks_exc.ConnectFailure('refused'))
    with pytest.raises(nova_wire.NoValidHost):
        _boot(nova_with(placement))
    assert 'refused' in caplog.text
    assert len(placement.calls('put')) == 1
    assert claims.list_allocations(db) == []


def _consumer_exists(generation, allocations):
    """Placement where the instance already holds ``allocations``: a
    first PUT meets a consumer generation conflict, the GET shows them."""
    url = '/allocations/%s' % recorded.UUIDS[0]
    return FakePlacement(
        puts=[Response(409, _consumer_conflict(generation))],
        gets={url: Response(200, {
            'consumer_generation': generation, 'project_id': 'demo-project',
            'user_id': 'demo-user', 'allocations': allocations})})


def test_a_repeated_call_writes_its_allocation_once(nova_with, db):
    """A call repeated after its worker died (redelivered, the same
    instance uuid) finds the claims it holds and the allocation the dead
    worker wrote: it writes that allocation again, in its place, with
    the consumer's generation; nothing is counted twice."""
    chosen = _first(_boot(nova_with(FakePlacement())))
    rp = chosen['compute_node_uuid']
    resources = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
    placement = _consumer_exists(1, {rp: {'generation': 2,
                                          'resources': resources}})
    again = _first(_boot(nova_with(placement)))
    assert again['compute_node_uuid'] == rp
    _, (_, body) = placement.calls('put')
    assert body['consumer_generation'] == 1
    assert body['allocations'] == {rp: {'resources': resources}}
    assert {a['consumer_uuid'] for a in claims.list_allocations(db)} == {
        recorded.UUIDS[0]}


def test_a_consumer_that_exists_keeps_its_other_allocations(nova_with):
    source = 'aaaaaaaa-0000-4000-8000-000000000001'
    placement = _consumer_exists(3, {source: {'generation': 9,
                                              'resources': {'VCPU': 1}}})
    chosen = _first(_boot(nova_with(placement)))
    _, (_, body) = placement.calls('put')
    assert body['consumer_generation'] == 3
    assert body['allocations'] == {
        source: {'resources': {'VCPU': 1}},
        chosen['compute_node_uuid']: {'resources': {
            'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}}}


def test_multi_create_undoes_what_it_wrote_before_a_refusal(nova_with, db):
    placement = FakePlacement(puts=[Response(204), Response(409, CONFLICT)])
    answer = _boot(nova_with(placement), num_instances=2)
    assert placement.calls('delete') == [
        ('/allocations/%s' % recorded.UUIDS[0], None)]
    # a new plan, both written again and both claimed
    assert len(placement.calls('put')) == 4
    assert {a['consumer_uuid'] for a in claims.list_allocations(db)} == \
        set(recorded.UUIDS[:2])
    assert len(answer) == 2


def test_only_the_instance_nova_named_is_written_before_4_4(nova_with):
    placement = FakePlacement()
    _boot(nova_with(placement), num_instances=2, pin='4.3')
    assert [url for url, _ in placement.calls('put')] == [
        '/allocations/%s' % recorded.UUIDS[0]]


def test_a_class_of_a_child_goes_to_the_child():
    root, child = 'r' * 8, 'c' * 8
    url = '/resource_providers?in_tree=%s&resources=CUSTOM_PCI_X:1' % root
    placement = FakePlacement(gets={url: Response(200, {
        'resource_providers': [{'uuid': child}]})})
    selection = type('Sel', (), {'compute_node_uuid': root,
                                 'host': 'h'})()
    nova_placement.AllocationWriter(placement).write(
        'i', selection, {'VCPU': 2, 'CUSTOM_PCI_X': 1}, 'p', 'u')
    [(_, body)] = placement.calls('put')
    assert body['allocations'] == {root: {'resources': {'VCPU': 2}},
                                   child: {'resources': {
                                       'CUSTOM_PCI_X': 1}}}


def test_an_alternates_allocation_request_names_the_child():
    """Nova's conductor claims an alternate host with the allocation
    request of its selection: a class a child provider holds must name
    that child (Nova's ServerMovingTestsWithNestedResourceRequests:
    Placement refused the root, 409, and a resize ended in NoValidHost
    once the first host failed)."""
    root, child = 'r' * 8, 'c' * 8
    url = '/resource_providers?in_tree=%s&resources=CUSTOM_MAGIC:1' % root
    placement = FakePlacement(gets={url: Response(200, {
        'resource_providers': [{'uuid': child}]})})
    alternate = type('Sel', (), {'compute_node_uuid': root, 'host': 'h'})()
    writer = nova_placement.AllocationWriter(placement)
    request = json.loads(nova_wire.allocation_request(
        alternate, {'VCPU': 2, 'CUSTOM_MAGIC': 1}, writer.answer_targets))
    assert request == {
        'allocations': {root: {'resources': {'VCPU': 2}},
                        child: {'resources': {'CUSTOM_MAGIC': 1}}},
        'mappings': {'': [root, child]}}
    # Placement unreachable: the root, as without a Placement to ask
    down = nova_placement.AllocationWriter(FakePlacement(
        fail=ks_exc.ConnectFailure('down')))
    assert json.loads(nova_wire.allocation_request(
        alternate, {'VCPU': 2, 'CUSTOM_MAGIC': 1},
        down.answer_targets))['allocations'] == {root: {'resources': {
            'VCPU': 2, 'CUSTOM_MAGIC': 1}}}


class _Selection(dict):
    """What the write-back and ``nova_wire.answer`` read of a Selection."""

    def __init__(self, root, allocation):
        super().__init__(allocation=allocation, limits={})
        self.compute_node_uuid = root
        self.host = self.nodename = 'host-' + root[:1]


def _in_tree(root, rc, amount=1):
    return '/resource_providers?in_tree=%s&resources=%s:%d' % (root, rc,
                                                                amount)


def _providers(*uuids):
    return Response(200, {'resource_providers': [{'uuid': u}
                                                 for u in uuids]})


def test_the_answer_names_the_providers_the_write_back_wrote():
    """The primary selection's allocation request names the child its
    allocation was written on, asked of Placement once: asked again
    after the write, Placement would name no provider (the child's last
    unit is taken now) and the request the root, where nova's conductor
    maps the request's groups from. An alternate is asked of
    Placement."""
    root, child, other, other_child = 'r' * 8, 'c' * 8, 'o' * 8, 'x' * 8
    wanted = {'VCPU': 2, 'CUSTOM_MAGIC': 1}
    placement = FakePlacement(gets={
        _in_tree(root, 'CUSTOM_MAGIC'): [_providers(child), _providers()],
        _in_tree(other, 'CUSTOM_MAGIC'): _providers(other_child)})
    writer = nova_placement.AllocationWriter(placement)
    primary, alternate = _Selection(root, wanted), _Selection(other, wanted)
    answer = nova_placement.AnswerTargets(writer)
    selections = nova_placement.WriteBack(writer, release=None).select(
        lambda spec: [[primary, alternate]],
        {'project_id': 'p', 'user_id': 'u'}, ['i'], {'i'}, None, answer)
    [[first, second]] = nova_wire.answer(selections, True, CELL,
                                         lambda sel: 'nova', answer)
    expected = {child: {'resources': {'CUSTOM_MAGIC': 1}},
                root: {'resources': {'VCPU': 2}}}
    [(_, put)] = placement.calls('put')
    assert put['allocations'] == expected
    assert json.loads(first['nova_object.data']['allocation_request'])[
        'allocations'] == expected
    assert json.loads(second['nova_object.data']['allocation_request'])[
        'allocations'] == {other_child: {'resources': {'CUSTOM_MAGIC': 1}},
                           other: {'resources': {'VCPU': 2}}}
    assert [url for url, _ in placement.calls('get')] == [
        _in_tree(root, 'CUSTOM_MAGIC'), _in_tree(other, 'CUSTOM_MAGIC')]


def test_the_answer_asks_placement_where_each_class_goes(nova_with):
    placement = FakePlacement()
    nova = nova_with(placement)
    assert isinstance(nova._answer_targets(), nova_placement.AnswerTargets)
    answer = send(nova, 'select_destinations', '4.5',
                  recorded.select_args('4.5', policy=None))
    # the root classes only: nothing to ask Placement
    assert placement.calls('get') == []
    for alternate in answer[0]:
        data = alternate['nova_object.data']
        assert list(json.loads(data['allocation_request'])[
            'allocations']) == [data['compute_node_uuid']]


def test_write_back_needs_placement_options(conf, manager,  # noqa: F811
                                            transport):
    conf.set_override('enabled', True, 'nova')
    conf.set_override('cell_uuid', CELL, 'nova')
    conf.set_override('topic', 'scheduler_v1', 'scheduler')
    with pytest.raises(Exception, match='placement_write_back'):
        nova_endpoint.servers(conf, transport, manager)
    conf.set_override('auth_type', 'none', 'placement_feed')
    conf.set_override('endpoint_override', 'http://127.0.0.1:1',
                      'placement_feed')
    [server] = nova_endpoint.servers(conf, transport, manager)
    [endpoint] = server.dispatcher.endpoints
    assert endpoint.write_back is not None



def _rebuild_check(host='compute-02', node='compute-02', memory_mb=None,
                   **image_props):
    """select_destinations as nova 34's conductor sends a rebuild with a
    new image (``compute.api.API.rebuild``): the instance's host and node
    forced, the hint ``_nova_check_type``, no alternates."""
    args = recorded.select_args('4.5', policy=None, num_instances=1)
    args['return_alternates'] = False
    data = args['spec_obj']['nova_object.data']
    data.update(force_hosts=[host], force_nodes=[node],
                scheduler_hints={'_nova_check_type': ['rebuild']})
    if memory_mb is not None:
        data['flavor']['nova_object.data']['memory_mb'] = memory_mb
    props = data['image']['nova_object.data']['properties']
    props['nova_object.data'].update(image_props)
    return args


def test_a_rebuild_check_claims_and_writes_nothing(nova_with, db):
    placement = FakePlacement()
    nova = nova_with(placement)
    # the instance holds its resources where it is: a flavor no host has
    # room for is no reason to refuse (nova-scheduler counts none either)
    [[answer]] = send(nova, 'select_destinations', '4.5',
                      _rebuild_check(memory_mb=10 ** 6))
    selection = answer['nova_object.data']
    assert (selection['service_host'], selection['nodename']) == (
        'compute-02', 'compute-02')
    assert placement.sent == []
    assert claims.list_allocations(db) == []


def test_a_rebuild_check_refuses_an_image_the_host_cannot_run(nova_with,
                                                             db, caplog):
    caplog.set_level('INFO')
    placement = FakePlacement()
    nova = nova_with(placement)
    with pytest.raises(nova_wire.NoValidHost):
        send(nova, 'select_destinations', '4.5',
             _rebuild_check(hw_architecture='aarch64'))
    assert 'ImagePropertiesFilter' in caplog.text
    assert placement.sent == [] and claims.list_allocations(db) == []
    # the check names the host: without one it is an invalid request
    args = _rebuild_check()
    data = args['spec_obj']['nova_object.data']
    data.update(force_hosts=None, force_nodes=None)
    with pytest.raises(exception.InvalidField, match='force_hosts'):
        send(nova, 'select_destinations', '4.5', args)
