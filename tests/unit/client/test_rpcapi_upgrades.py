"""``[upgrade_levels] scheduler``: versions, release aliases and ``auto``,
and objects sent at the versions the cap allows.

The transport's ``_send`` is replaced by a recorder that answers
``get_service_versions`` as the test says (a list, or an exception).
"""

from unittest import mock

import pytest
from oslo_utils import versionutils

from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.client import rpcapi

CTXT = sched_context.RequestContext(project_id='p1', user_id='u1')


@pytest.fixture
def answers(transport):
    """Set ``answers.value`` to what get_service_versions returns (or
    raises); ``answers.sent`` records (method, version) of each message."""
    class Answers:
        value = []
        sent = []

    def record(target, ctxt, message, wait_for_reply=None, **kwargs):
        Answers.sent.append((message['method'], message['version'],
                             message['args']))
        if message['method'] == 'get_service_versions':
            if isinstance(Answers.value, Exception):
                raise Answers.value
            return Answers.value
        return None

    with mock.patch.object(transport, '_send', side_effect=record):
        yield Answers


def _api(conf, transport, cap):
    conf.set_override('scheduler', cap, 'upgrade_levels')
    return rpcapi.SchedulerAPI(conf, transport)


def _workers(*versions):
    return [{'host': 'h', 'pid': i, 'worker': 0, 'release': 'x',
             'rpc_version': v, 'object_versions': {}}
            for i, v in enumerate(versions)]


def test_a_release_alias_caps_at_that_releases_version(conf, transport,
                                                       answers):
    api = _api(conf, transport, '0.1')
    assert api.current_cap() == rpcapi.VERSION_ALIASES['0.1'] == '1.2'
    with pytest.raises(exception.InvalidRequest, match='caps it at 1.2'):
        api.get_service_versions(CTXT)
    api.build_failed(CTXT, 'h1')
    assert answers.sent[-1][:2] == ('build_failed', '1.2')


def test_auto_caps_at_the_lowest_live_worker(conf, transport, answers):
    answers.value = _workers('1.3', '1.2', '1.3')
    api = _api(conf, transport, 'auto')
    assert api.current_cap(CTXT) == '1.2'
    with pytest.raises(exception.InvalidRequest):
        api.get_service_versions(CTXT)


def test_auto_with_every_worker_current_is_uncapped(conf, transport,
                                                     answers):
    answers.value = _workers('1.3', '1.3')
    api = _api(conf, transport, 'auto')
    assert api.get_service_versions(CTXT) == answers.value


def test_auto_counts_a_worker_that_cannot_answer_as_the_oldest(
        conf, transport, answers):
    answers.value = RuntimeError('Endpoint does not support RPC version')
    api = _api(conf, transport, 'auto')
    oldest = rpcapi.VERSION_ALIASES[rpcapi.OLDEST_SUPPORTED]
    assert api.current_cap(CTXT) == oldest


def test_auto_asks_again_only_when_the_cached_answer_expired(
        conf, transport, answers):
    answers.value = _workers('1.2')
    api = _api(conf, transport, 'auto')
    with mock.patch('time.monotonic', return_value=1000.0):
        assert api.current_cap(CTXT) == '1.2'
        answers.value = _workers('1.3')
        assert api.current_cap(CTXT) == '1.2'
    lifetime = conf.upgrade_levels.auto_cache_seconds
    with mock.patch('time.monotonic', return_value=1000.0 + lifetime):
        assert api.current_cap(CTXT) == '1.3'
    asked = [m for m, _, _ in answers.sent if m == 'get_service_versions']
    assert len(asked) == 2


def test_each_cap_lists_registered_objects_at_versions_not_above_now():
    """An object newer than a cap's release is absent from its manifest
    (only methods or fields the cap refuses can carry it)."""
    registered = {name: classes[0] for name, classes in
                  objects.base.SchedulerObjectRegistry.obj_classes().items()
                  if issubclass(classes[0], objects.base.SchedulerObject)}
    for cap, manifest in rpcapi.OBJECT_VERSIONS.items():
        for name, version in manifest.items():
            current = registered[name].VERSION
            assert (versionutils.convert_version_to_tuple(version) <=
                    versionutils.convert_version_to_tuple(current)), (
                cap, name)


def test_the_oldest_release_manifest_covers_every_rpc_object():
    """Every object 0.1 had on the wire (all at 1.0) is listed."""
    oldest = rpcapi.OBJECT_VERSIONS[rpcapi.VERSION_ALIASES[
        rpcapi.OLDEST_SUPPORTED]]
    assert set(oldest) == {
        'Aggregate', 'ComputeNode', 'Destination', 'Flavor', 'ImageMeta',
        'InstanceGroup', 'InstanceInfo', 'RequestSpec', 'SchedulerRetries',
        'Selection'}
    assert set(oldest.values()) == {'1.0'}


def test_capped_clients_send_objects_at_the_manifest_version(
        conf, transport, answers):
    api = _api(conf, transport, '0.1')
    node = objects.ComputeNode(host='h1', vcpus=4)
    with mock.patch.dict(rpcapi.OBJECT_VERSIONS['1.2'],
                         {'ComputeNode': '1.0'}), \
            mock.patch.object(objects.ComputeNode, 'obj_make_compatible',
                              autospec=True) as make_compatible:
        api.update_resource_stats(CTXT, 'h1', node)
    _, _, args = answers.sent[-1]
    assert args['stats']['scheduler_object.version'] == '1.0'
    assert make_compatible.call_args[0][2] == '1.0'


def test_object_manifest_picks_the_highest_entry_not_above_the_cap():
    assert rpcapi.object_manifest(None) is None
    assert rpcapi.object_manifest('1.0') is None
    assert rpcapi.object_manifest('1.2') is rpcapi.OBJECT_VERSIONS['1.2']
    newest = max(rpcapi.OBJECT_VERSIONS,
                 key=lambda v: tuple(map(int, v.split('.'))))
    assert rpcapi.object_manifest('1.9') is rpcapi.OBJECT_VERSIONS[newest]


def test_auto_lets_a_refusal_through_instead_of_capping(
        conf, transport, answers, monkeypatch):
    """A policy refusal (``exception.Forbidden`` where it exists) says
    nothing about the worker's release: the caller sees it."""
    monkeypatch.setattr(rpcapi, '_NOT_AN_OLD_WORKER', (PermissionError,))
    answers.value = PermissionError('scheduler:get_service_versions')
    api = _api(conf, transport, 'auto')
    with pytest.raises(PermissionError):
        api.current_cap(CTXT)
