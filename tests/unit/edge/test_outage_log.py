"""A database outage is one log line when it starts and one when it ends,
whatever the number of requests answered DatabaseUnavailable meanwhile."""

import logging

import pytest
import sqlalchemy.exc as sa_exc

from scheduler import exception
from scheduler import manager as manager_mod
from tests.unit.edge import edge

DOWN = sa_exc.OperationalError('SELECT 1', {}, Exception('server closed'))


def _database(monkeypatch, state):
    real = manager_mod.db_services.list_services

    def list_services(*args, **kwargs):
        if state['down']:
            raise DOWN
        return real(*args, **kwargs)
    monkeypatch.setattr(manager_mod.db_services, 'list_services',
                        list_services)


def _lines(caplog):
    return [r for r in caplog.records
            if r.name.startswith('scheduler.') and r.levelno >= logging.INFO]


def test_an_outage_is_two_lines_whatever_the_requests(manager, monkeypatch,
                                                      caplog):
    state = {'down': True}
    _database(monkeypatch, state)
    with caplog.at_level(logging.INFO):
        for _ in range(50):
            with pytest.raises(exception.DatabaseUnavailable):
                edge.send(manager, 'get_service_versions', cast=False)
            edge.send(manager, 'get_service_versions')       # a cast
        # refusals that are not the database's do not end it
        with pytest.raises(exception.Forbidden):
            edge.send(manager, 'get_service_versions', cast=False,
                      ctxt=edge.CTXT.__class__(roles=[]))
        state['down'] = False
        for _ in range(5):
            assert edge.send(manager, 'get_service_versions',
                             cast=False) == []
    lines = [r.getMessage() for r in _lines(caplog)
             if 'atabase' in r.getMessage()]
    assert len(lines) == 2, lines
    assert lines[0].startswith('Database unreachable')
    assert 'server closed' in lines[0]
    assert lines[1].startswith('Database reachable again after')
    assert '100 requests were answered DatabaseUnavailable' in lines[1]
    assert not any(r.exc_info for r in caplog.records)


def test_the_next_outage_is_two_lines_again(manager, monkeypatch, caplog):
    state = {'down': True}
    _database(monkeypatch, state)
    with caplog.at_level(logging.INFO):
        for down in (True, False, True, False):
            state['down'] = down
            for _ in range(3):
                try:
                    edge.send(manager, 'get_service_versions', cast=False)
                except exception.DatabaseUnavailable:
                    pass
    lines = [r.getMessage() for r in _lines(caplog)
             if 'atabase' in r.getMessage()]
    assert [line.split(' ')[1] for line in lines] == [
        'unreachable', 'reachable', 'unreachable', 'reachable']
    assert all('3 requests were' in line for line in lines[1::2])
