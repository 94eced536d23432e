"""A broker outage is one line when it starts and one when it ends, per
process, whatever the number of connections and reconnect attempts
(issue 24 point 7). The records are oslo.messaging's own format strings
and arguments."""

import logging
import uuid

import pytest

from scheduler.rpc import log_filters
from scheduler.transport import outage as transport_outage

UNREACHABLE = ('[%(connection_id)s] AMQP server on %(hostname)s:%(port)s '
               'is unreachable: %(err_str)s. Trying again in '
               '%(sleep_time)d seconds.')
RECONNECTED = ('[%(connection_id)s] Reconnected to AMQP server on '
               '%(hostname)s:%(port)s via [%(transport)s] client with '
               'port %(client_port)s.')


def _info(connection):
    return {'connection_id': connection, 'hostname': '127.0.0.1',
            'port': 5672, 'err_str': '[Errno 111] Connection refused',
            'sleep_time': 1, 'transport': 'amqp', 'client_port': 40000}


@pytest.fixture
def now():
    """The clock of the logger's outage (monotonic seconds)."""
    return [1000.0]


@pytest.fixture
def logger(caplog, now):
    """A logger of its own with a fresh filter and outage, as a worker
    has."""
    logger = logging.getLogger('test.broker.%s' % uuid.uuid4().hex)
    logger.addFilter(log_filters.BrokerOutage(
        transport_outage.Outage(clock=lambda: now[0])))
    caplog.set_level(logging.DEBUG, logger=logger.name)
    return logger


def _outage(logger, connections=('c1', 'c2', 'c3'), attempts=20):
    for _ in range(attempts):
        logger.error('Failed to consume message from queue: %s',
                     'Socket closed')
        for connection in connections:
            logger.error(UNREACHABLE, _info(connection))
        logger.error('Connection failed: %s (retrying in %s seconds)',
                     '[Errno 111] Connection refused', 1.0)
    logger.warning('Failed to acknowledge received message: %s',
                   'connection already closed')
    for connection in connections:
        logger.info(RECONNECTED, _info(connection))
    return attempts * (len(connections) + 2) + 1


def _lines(caplog, logger):
    return [r for r in caplog.records if r.name == logger.name]


def test_an_outage_is_two_lines_whatever_the_attempts(logger, caplog):
    logged = _outage(logger)
    lines = _lines(caplog, logger)
    assert [r.levelname for r in lines] == ['WARNING', 'INFO'], [
        r.getMessage() for r in lines]
    first, last = (r.getMessage() for r in lines)
    assert first.startswith('Message broker unreachable: Failed to consume '
                            'message from queue: Socket closed')
    assert last.startswith('Message broker reachable again after ')
    assert '(%d lines about reconnect attempts' % (logged - 1) in last
    assert not any(r.exc_info for r in lines)


def test_each_outage_is_two_lines_again(logger, caplog, now):
    for _ in range(3):
        _outage(logger, attempts=2)
        now[0] += transport_outage.SETTLE + 1
    messages = [r.getMessage().split(' ')[2] for r in
                _lines(caplog, logger)]
    assert messages == ['unreachable:', 'reachable'] * 3


def test_the_first_line_says_which_broker_and_why(logger, caplog):
    logger.error(UNREACHABLE, _info('c1'))
    assert [r.getMessage() for r in _lines(caplog, logger)] == [
        'Message broker unreachable: 127.0.0.1:5672: [Errno 111] Connection '
        'refused; reconnecting (nothing more is logged until it is back)']


def test_other_lines_pass_unchanged(logger, caplog):
    logger.warning('Reset consumer for queue %s next offset was at %s.',
                   'q', 3)
    logger.info(RECONNECTED, _info('c1'))      # no outage: not a line
    assert [r.getMessage() for r in _lines(caplog, logger)] == [
        'Reset consumer for queue q next offset was at 3.']


def test_installed_once_on_every_logger_of_oslo_messaging():
    first = log_filters.expected_broker_faults()
    again = log_filters.expected_broker_faults()
    assert first == again
    names = {logger.name for logger in first}
    # the rabbit driver's loggers, which log the outage, are found
    # without the scheduler naming them (the test may: it checks them)
    assert {'oslo.messaging._drivers.impl_rabbit',
            'oslo_messaging._drivers.amqpdriver'} <= names
    assert all(name.startswith(('oslo.messaging.', 'oslo_messaging.'))
               for name in names)
    for logger in first:
        outages = [f for f in logger.filters
                   if isinstance(f, log_filters.BrokerOutage)]
        one_lines = [f.text for f in logger.filters
                     if isinstance(f, log_filters.OneLine)]
        assert len(outages) == 1 and outages[0] is first[0].filters[0]
        assert sorted(one_lines) == sorted(set(one_lines))
        assert len(one_lines) == 2


def test_echoes_after_the_end_are_not_a_new_outage(logger, caplog, now):
    _outage(logger, attempts=2)
    # a message read on a connection now closed, acknowledged late
    logger.warning('Failed to acknowledge received message: %s',
                   'connection already closed')
    now[0] += transport_outage.SETTLE + 1   # the broker goes away again
    logger.error(UNREACHABLE, _info('c1'))
    messages = [r.getMessage().split(' ')[2] for r in
                _lines(caplog, logger)]
    assert messages == ['unreachable:', 'reachable', 'unreachable:']


def test_a_duplicate_after_a_reconnect_is_one_line_without_traceback(
        caplog):
    log_filters.expected_broker_faults()
    logger = logging.getLogger('oslo_messaging._drivers.amqpdriver')
    try:
        raise ValueError('Found duplicate message(abc). Skipping it.')
    except ValueError:
        logger.exception('ignoring duplicate message %s', 'abc')
    [record] = [r for r in caplog.records if 'duplicate' in r.getMessage()
                or 'delivered again' in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert record.exc_info is None
    assert 'Skipped a message delivered again' in record.getMessage()
