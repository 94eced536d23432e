"""The envelope of a message (method name, version, context) is checked
before anything runs; a caller's value is echoed cut; a fault of the
worker reaches the caller as an error id, never as a traceback."""

import logging

import pytest
import sqlalchemy as sa

from scheduler import context as sched_context
from scheduler import exception
from scheduler.db import models
from tests.unit.edge import edge

HOST = {'vcpus': 8, 'memory_mb': 16384, 'local_gb': 500}


def _providers(db):
    with db.reader() as session:
        return session.execute(sa.select(models.providers.c.host)).all()


@pytest.mark.parametrize('method', [7, None, ['select_destinations'], ''])
def test_a_method_that_is_not_a_name_is_refused(manager, method):
    with pytest.raises(exception.InvalidField) as info:
        edge.send(manager, method, cast=False)
    assert info.value.kwargs['field'] == 'method'


@pytest.mark.parametrize('version', ['x', '1', None, 1.3, '1.3\n'])
def test_a_version_that_is_not_one_is_refused(manager, version):
    with pytest.raises(exception.InvalidField) as info:
        edge.send(manager, 'get_service_versions', cast=False,
                  version=version)
    assert info.value.kwargs['field'] == 'version'


@pytest.mark.parametrize('values, field', [
    # (oslo.context sends it twice: as itself and in user_identity)
    ({'user_id': '\ud800'}, 'context.user_identity'),
    ({'project_id': 'p1\nFORGED LINE'}, 'context.project_id'),
    ({'request_id': 'r' * 5000}, 'context.request_id'),
    ({'roles': ['service', 'x\x00']}, 'context.roles[1]'),
])
def test_a_context_oslo_log_cannot_write_is_refused_first(
        manager, db, caplog, values, field):
    ctxt = sched_context.RequestContext(
        **dict({'project_id': 'p1', 'roles': ['service']}, **values))
    with pytest.raises(exception.InvalidField) as info:
        edge.send(manager, 'update_resource_stats', cast=False, ctxt=ctxt,
                  name='h1', stats=dict(HOST))
    assert info.value.kwargs['field'] == field
    assert _providers(db) == []          # nothing was written
    with caplog.at_level(logging.INFO):
        edge.send(manager, 'update_resource_stats', ctxt=ctxt, name='h1',
                  stats=dict(HOST))
    assert 'Traceback' not in caplog.text
    assert _providers(db) == []


def test_a_huge_value_is_echoed_cut(manager, caplog):
    name = 'x' * 60000
    with caplog.at_level(logging.INFO):
        with pytest.raises(exception.InvalidField) as info:
            edge.send(manager, 'build_failed', cast=False,
                      **{name: 1, 'name': 'h1'})
    assert len(str(info.value)) < 1000
    assert all(len(str(value)) < 500
               for value in info.value.kwargs.values())
    assert '60000 characters' in str(info.value)
    assert len(caplog.text) < 2000


def test_a_long_method_name_is_echoed_cut(manager, caplog):
    with caplog.at_level(logging.INFO):
        with pytest.raises(exception.InvalidField) as info:
            edge.send(manager, 'm' * 100000, cast=False)
    assert 'no such method' in str(info.value)
    assert len(str(info.value)) < 1000 and len(caplog.text) < 2000


def test_a_call_of_a_report_answers_without_traceback(manager):
    with pytest.raises(exception.InvalidField) as info:
        edge.send(manager, 'update_resource_stats', cast=False, name='h1',
                  stats={})
    assert info.value.kwargs['field'] == 'stats.vcpus'
    assert edge.send(manager, 'update_resource_stats', cast=False,
                     name='h1', stats=dict(HOST)) is None


def test_a_fault_is_an_error_id_for_the_caller(manager, monkeypatch,
                                               caplog):
    def fail(node):
        raise RuntimeError('/srv/secret/path.py went wrong')
    monkeypatch.setattr(manager.report_writer, 'submit', fail)
    with caplog.at_level(logging.INFO):
        with pytest.raises(exception.InternalError) as info:
            edge.send(manager, 'update_resource_stats', cast=False,
                      name='h1', stats=dict(HOST))
    said = str(info.value)
    assert 'secret' not in said and 'Traceback' not in said
    assert info.value.kwargs['error_id'] in caplog.text
    # the worker's log has the traceback, once
    assert caplog.text.count('Traceback') == 1


def test_a_report_not_stored_is_an_answer_to_a_call_and_raised_on_a_cast(
        manager, monkeypatch):
    def fail(node):
        raise exception.ReportNotStored(host='h1', node='h1',
                                        reason='timed out')
    monkeypatch.setattr(manager.report_writer, 'submit', fail)
    with pytest.raises(exception.ReportNotStored):
        edge.send(manager, 'update_resource_stats', cast=False, name='h1',
                  stats=dict(HOST))
    # a cast: raised on for the report topic's server to redeliver
    with pytest.raises(exception.ReportNotStored):
        edge.send(manager, 'update_resource_stats', name='h1',
                  stats=dict(HOST))


def test_a_refusal_of_many_roles_is_echoed_cut(manager, caplog):
    ctxt = sched_context.RequestContext(
        project_id='p1', roles=['role-%d' % i for i in range(20000)])
    with caplog.at_level(logging.INFO):
        with pytest.raises(exception.Forbidden) as info:
            edge.send(manager, 'get_service_versions', cast=False,
                      ctxt=ctxt)
    assert len(str(info.value)) < 1000
    assert len(caplog.text) < 2000
