"""Only the RPC methods of the endpoint can be called, each behind its
policy rule; any other attribute (``conf``, ``stop``, ``target`` ...) is
an unknown method, answered with InvalidRequest listing what is served,
and the worker serves on."""

import logging

import pytest

from scheduler import context as sched_context
from scheduler import exception
from scheduler import manager as manager_mod
from scheduler.edge import dispatcher
from scheduler.edge import policy
from scheduler.edge import schemas
from tests.unit.edge import edge

NOT_RPC = ['conf', 'notifier', 'host_cache', 'target', 'stop', 'serve', 'db',
           'report_writer', '__init__', '__class__', '_private',
           'oslo_rpc_server_ping']
NOBODY = sched_context.RequestContext(project_id='p1', roles=[])
#: the code every method wrapped by ``policy.authorize`` runs first
_AUTHORIZED = policy.authorize('build_failed')(lambda self, ctxt: None)


def _authorized_methods(cls):
    """{name: policy rule's method} of the methods of ``cls`` that carry
    ``@policy.authorize``."""
    found = {}
    for name in dir(cls):
        func = getattr(cls, name)
        if getattr(func, '__code__', None) is _AUTHORIZED.__code__:
            closure = dict(zip(func.__code__.co_freevars,
                               (c.cell_contents for c in func.__closure__)))
            found[name] = closure['method']
    return found


def test_the_allow_list_is_the_methods_behind_a_policy_rule():
    authorized = _authorized_methods(manager_mod.SchedulerManager)
    assert set(authorized) == set(schemas.METHODS)
    assert set(policy.METHODS) == set(schemas.METHODS)
    # each method checks its own rule, not another's
    assert all(rule == name for name, rule in authorized.items())
    served = dispatcher.RPCMethods()
    assert {name for name in dir(manager_mod.SchedulerManager)
            if served.is_allowed(None, name)} == set(schemas.METHODS)


@pytest.mark.parametrize('method', sorted(schemas.METHODS))
def test_every_rpc_method_is_behind_its_rule(manager, method):
    with pytest.raises(exception.Forbidden, match='scheduler:' + method):
        edge.send(manager, method, cast=False, ctxt=NOBODY)
    assert manager.recorder.totals()['rpc_errors'] == {
        (method, 'Forbidden'): 1}


@pytest.mark.parametrize('name', NOT_RPC)
def test_an_attribute_is_not_a_method(manager, conf, name, caplog):
    with pytest.raises(exception.InvalidField) as info:
        edge.send(manager, name, cast=False)
    assert 'no such method' in str(info.value)
    assert 'select_destinations, sync_instance_info' in str(info.value)
    assert 'Traceback' not in caplog.text
    # counted in the worker's metrics, by method and exception
    # (one label for every unknown name: no label per name sent)
    assert manager.recorder.totals()['rpc_errors'] == {
        ('(unknown)', 'InvalidField'): 1}
    # nothing was replaced or stopped: the worker serves on
    assert manager.conf is conf
    assert edge.send(manager, 'get_service_versions', cast=False) == []


@pytest.mark.parametrize('name', NOT_RPC)
def test_a_cast_to_an_attribute_is_one_warning(manager, conf, name,
                                               caplog):
    empty = sched_context.RequestContext(overwrite=False)
    with caplog.at_level(logging.WARNING):
        assert edge.send(manager, name, ctxt=empty) is None
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING
                and r.name == 'scheduler.edge.dispatcher']
    assert len(warnings) == 1
    assert 'no such method' in warnings[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)
    assert manager.conf is conf
    assert edge.send(manager, 'get_service_versions', cast=False) == []
