"""Policy on every RPC method: a caller without the service (or admin) role
is refused with an expected Forbidden naming the rule, logged once; the
rules are configurable through [oslo_policy] policy_file; the generated
policy sample is current; every public endpoint method has a rule."""

import functools
import inspect
import logging
import os
import pathlib
import subprocess
import sys

import pytest
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from stevedore import driver as stevedore_driver

from scheduler import context as sched_context
from scheduler import exception
from scheduler import manager as sched_manager
from scheduler import objects
from scheduler.edge import policy
from tests import rst_blocks
from tests.unit.edge import edge

ROOT = pathlib.Path(__file__).resolve().parents[3]
UUID = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
SPEC = objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=512))

# one valid call per method: (method, positional args after the context)
CALLS = [
    ('select_destinations', (SPEC,)),
    ('update_resource_stats', ('h1', {'vcpus': 4, 'memory_mb': 4096,
                                      'local_gb': 40})),
    ('delete_allocations', (UUID,)),
    ('sync_instance_info', ('h1', [UUID])),
    ('update_aggregates', ([objects.Aggregate(uuid=UUID, name='a',
                                              hosts=[], metadata={})],)),
    ('delete_aggregate', (UUID,)),
    ('update_instance_info', ('h1', [objects.InstanceInfo(uuid=UUID)])),
    ('delete_instance_info', ('h1', UUID)),
    ('build_failed', ('h1',)),
]
ANONYMOUS = sched_context.RequestContext()
MEMBER = sched_context.RequestContext(project_id='p1', roles=['member'])
FLAG_ONLY = sched_context.RequestContext(is_admin=True)
SERVICE = sched_context.service_context('conductor')
ADMIN = sched_context.RequestContext(roles=['admin'])


def _forbidden(call, *args):
    with pytest.raises(rpc_dispatcher.ExpectedException) as info:
        call(*args)
    return info.value.exc_info[1]


@pytest.mark.parametrize('ctxt', [ANONYMOUS, MEMBER, FLAG_ONLY],
                         ids=['no-roles', 'member', 'is_admin-flag'])
@pytest.mark.parametrize('method, args', CALLS, ids=[c[0] for c in CALLS])
def test_refused_without_the_role(manager, caplog, ctxt, method, args):
    caplog.set_level(logging.DEBUG)
    error = _forbidden(getattr(manager, method), ctxt, *args)
    assert isinstance(error, exception.Forbidden)
    assert error.kwargs['rule'] == 'scheduler:' + method
    assert str(error).startswith(
        'Policy does not allow scheduler:%s for this caller' % method)
    assert 'rule:service_or_admin' in str(error)
    refusals = [r for r in caplog.records if 'Refused' in r.getMessage()]
    assert len(refusals) == 1 and refusals[0].levelname == 'WARNING'
    assert 'scheduler:' + method in refusals[0].getMessage()


@pytest.mark.parametrize('ctxt', [SERVICE, ADMIN], ids=['service', 'admin'])
def test_served_with_the_role(manager, ctxt):
    manager.update_resource_stats(ctxt, 'h1', {'vcpus': 4,
                                               'memory_mb': 4096,
                                               'local_gb': 40})
    [[chosen]] = manager.select_destinations(ctxt, SPEC)
    assert chosen.host == 'h1'
    for method, args in CALLS[2:]:
        getattr(manager, method)(ctxt, *args)   # no Forbidden


def test_policy_file_changes_a_rule(conf, managers, tmp_path):
    """The override example of doc/source/admin/security.rst, verbatim."""
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text(rst_blocks.block_containing(
        'doc/source/admin/security.rst', '"scheduler:build_failed": "!"'))
    conf.set_override('policy_file', str(policy_file), 'oslo_policy')
    manager = managers()
    placement = sched_context.RequestContext(roles=['placement'])
    with pytest.raises(exception.NoValidHost):   # allowed: no host yet
        try:
            manager.select_destinations(placement, SPEC)
        except rpc_dispatcher.ExpectedException as exc:
            raise exc.exc_info[1]
    error = _forbidden(manager.build_failed, SERVICE, 'h1')
    assert error.kwargs['check'] == '!'


def test_every_rpc_method_has_a_rule():
    public = {name for name, _ in inspect.getmembers(
        sched_manager.SchedulerManager, inspect.isfunction)
        if not name.startswith('_')} - {'stop', 'serve'}
    assert public == set(policy.METHODS)
    rules = {rule.name for rule in policy.list_rules()}
    assert {'scheduler:' + m for m in public} <= rules


def test_unknown_method_has_no_rule():
    with pytest.raises(ValueError, match='no policy rule'):
        policy.authorize('select_destination')


def test_policy_sample_is_current(tmp_path):
    out = tmp_path / 'policy.yaml.sample'
    subprocess.run(
        [os.path.join(os.path.dirname(sys.executable),
                      'oslopolicy-sample-generator'),
         '--config-file',
         str(ROOT / 'etc/scheduler/scheduler-policy-generator.conf'),
         '--output-file', str(out)],
        check=True, cwd=ROOT, capture_output=True)
    committed = (ROOT / 'etc/scheduler/policy.yaml.sample').read_text()
    assert out.read_text() == committed, (
        'etc/scheduler/policy.yaml.sample is out of date: run '
        '"tox -e genconfig" and commit the result')


def test_policy_entry_points_load():
    rules = stevedore_driver.DriverManager(
        'oslo.policy.policies', 'scheduler').driver()
    assert 'scheduler:select_destinations' in {r.name for r in rules}
    enforcer = stevedore_driver.DriverManager(
        'oslo.policy.enforcer', 'scheduler').driver()
    assert enforcer.authorize('scheduler:delete_allocations', {},
                              SERVICE.to_policy_values())


@pytest.mark.parametrize('text, words', [
    ('"scheduler:build_failed": "rule:no_such_rule"\n', 'undefined rule'),
    ('"scheduler:build_failed": [unclosed\n', 'Error'),
], ids=['undefined-rule', 'not-yaml'])
def test_bad_policy_file_stops_start_up(conf, tmp_path, text, words):
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text(text)
    conf.set_override('policy_file', str(policy_file), 'oslo_policy')
    with pytest.raises(exception.InvalidPolicy) as info:
        policy.check_policy_file(conf)
    assert str(info.value).startswith(
        'Invalid policy file %s: ' % policy_file)
    assert words in str(info.value)


def test_no_policy_file_keeps_the_defaults(conf, tmp_path):
    conf.set_override('policy_file', str(tmp_path / 'absent.yaml'),
                      'oslo_policy')
    policy.check_policy_file(conf)


def test_policy_file_change_takes_effect_after_the_check_interval(
        conf, managers, tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(policy.time, 'monotonic', lambda: clock[0])
    policy_file = tmp_path / 'policy.yaml'
    conf.set_override('policy_file', str(policy_file), 'oslo_policy')
    manager = managers()
    manager.build_failed(SERVICE, 'h1')          # no file: the defaults
    policy_file.write_text('"scheduler:build_failed": "!"\n')
    manager.build_failed(SERVICE, 'h1')          # not looked at yet
    clock[0] += policy.RELOAD_CHECK_SECONDS
    error = _forbidden(manager.build_failed, SERVICE, 'h1')
    assert error.kwargs['check'] == '!'


@pytest.mark.parametrize('text', [
    '"scheduler:build_failed": "role:admin\n  - [unclosed\n',
    '"scheduler:build_failed": "rule:nobody_defined_this"\n',
])
def test_a_bad_policy_file_while_serving_keeps_the_running_rules(
        conf, managers, tmp_path, monkeypatch, caplog, text):
    clock = [1000.0]
    monkeypatch.setattr(policy.time, 'monotonic', lambda: clock[0])
    policy_file = tmp_path / 'policy.yaml'
    policy_file.write_text('"scheduler:build_failed": "role:service"\n')
    conf.set_override('policy_file', str(policy_file), 'oslo_policy')
    manager = managers()
    manager.build_failed(SERVICE, 'h1')
    policy_file.write_text(text)
    for _ in range(3):
        clock[0] += policy.RELOAD_CHECK_SECONDS
        manager.build_failed(SERVICE, 'h1')      # served as before
    warnings = [r for r in caplog.records if 'not applied' in r.getMessage()]
    assert len(warnings) == 1
    assert 'Traceback' not in caplog.text
    # a good file is applied at the next look
    policy_file.write_text('"scheduler:build_failed": "!"\n')
    clock[0] += policy.RELOAD_CHECK_SECONDS
    assert _forbidden(manager.build_failed, SERVICE, 'h1').kwargs[
        'check'] == '!'


def test_a_verdict_is_remembered_per_caller_until_the_next_look(
        conf, db, tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(policy.time, 'monotonic', lambda: clock[0])
    enforcer = policy.new_enforcer(conf)
    checks = []
    real_authorize = enforcer.authorize

    def counting_authorize(*args, **kwargs):
        checks.append(args[0])
        return real_authorize(*args, **kwargs)

    monkeypatch.setattr(enforcer, 'authorize', counting_authorize)
    rule = policy.PREFIX + 'select_destinations'
    for _ in range(3):
        assert enforcer.allows(rule, SERVICE)
    assert checks == [rule]
    # other credentials get their own verdict, not the service's
    stranger = sched_context.RequestContext(project_id='p', user_id='u',
                                      roles=['member'])
    assert not enforcer.allows(rule, stranger)
    assert not enforcer.allows(rule, stranger)
    assert len(checks) == 2
    # the next look at the policy files forgets them
    clock[0] += policy.RELOAD_CHECK_SECONDS
    assert enforcer.allows(rule, SERVICE)
    assert len(checks) == 3


def test_a_caller_without_policy_values_is_checked_every_time(conf):
    enforcer = policy.new_enforcer(conf)
    rule = policy.PREFIX + 'select_destinations'
    creds = {'roles': ['service'], 'project_id': 'p', 'user_id': 'u'}
    assert enforcer.allows(rule, creds)
    assert not enforcer.allows(rule, dict(creds, roles=['member']))


def _counting_checks(monkeypatch):
    checks = []
    real_check = policy.check

    def counting_check(enforcer, ctxt, method):
        checks.append(method)
        return real_check(enforcer, ctxt, method)

    monkeypatch.setattr(policy, 'check', counting_check)
    return checks


def test_a_message_evaluates_its_rule_once(manager, monkeypatch):
    checks = _counting_checks(monkeypatch)
    edge.send(manager, 'update_resource_stats', name='h1', stats={
        'vcpus': 4, 'memory_mb': 4096, 'local_gb': 40})
    manager.report_writer.flush()
    assert checks == ['update_resource_stats']
    [[chosen]] = edge.send(manager, 'select_destinations', cast=False,
                           spec_obj=SPEC)
    assert chosen.host == 'h1'
    assert checks == ['update_resource_stats', 'select_destinations']


def test_a_refused_message_is_answered_and_logged_once(manager, caplog,
                                                       monkeypatch):
    caplog.set_level(logging.DEBUG)
    checks = _counting_checks(monkeypatch)
    with pytest.raises(exception.Forbidden) as info:
        edge.send(manager, 'select_destinations', cast=False, ctxt=MEMBER,
                  spec_obj=SPEC)
    assert info.value.kwargs['rule'] == 'scheduler:select_destinations'
    assert checks == ['select_destinations']
    refusals = [r for r in caplog.records if 'Refused' in r.getMessage()]
    assert len(refusals) == 1 and refusals[0].levelname == 'WARNING'


def test_the_edge_enforces_a_rule_the_method_forgot(conf, managers, caplog):
    """A method without its ``authorize`` decorator is still behind its
    rule over RPC: the edge evaluates it, not the decorator."""
    calls = []

    class Forgetful(sched_manager.SchedulerManager):
        def build_failed(self, ctxt, name=None):
            calls.append(name)

    manager = managers(Forgetful)
    with pytest.raises(exception.Forbidden):
        edge.send(manager, 'build_failed', cast=False, ctxt=MEMBER,
                  name='h1')
    assert calls == []
    edge.send(manager, 'build_failed', cast=False, ctxt=SERVICE, name='h1')
    assert calls == ['h1']


def test_a_decorator_around_authorize_is_not_skipped(conf, managers):
    """The edge calls the method ``authorize`` wraps only when
    ``authorize`` is the method's outermost decorator."""
    calls = []

    def counted(func):
        @functools.wraps(func)      # copies authorize's attribute
        def wrapper(self, *args, **kwargs):
            calls.append('outer')
            return func(self, *args, **kwargs)
        return wrapper

    class Wrapped(sched_manager.SchedulerManager):
        @counted
        @policy.authorize('build_failed')
        def build_failed(self, ctxt, name=None):
            calls.append(name)

    manager = managers(Wrapped)
    edge.send(manager, 'build_failed', cast=False, ctxt=SERVICE, name='h1')
    assert calls == ['outer', 'h1']
