"""SelectDestinationsNotifier: off by default; when enabled, .start and
.end (or .error) around every decision, and a failing notifier never
fails the decision. Uses oslo.messaging's in-memory ``test`` driver."""

import logging
from unittest import mock

import pytest
from oslo_messaging.notify import _impl_test

from scheduler.service import composition
from scheduler import context as sched_context
from scheduler import exception
from scheduler.service import notifications
from scheduler import objects

from .. import fakes

UUIDS = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5%d' % i for i in range(3)]
CTXT = sched_context.RequestContext(project_id='p1', request_id='req-1',
                                    roles=['service'])
SERIALIZER = objects.SchedulerObjectSerializer()


@pytest.fixture
def sent():
    """Notifications the test driver recorded: (event, priority, payload,
    publisher)."""
    _impl_test.reset()

    def read():
        return [(message['event_type'], priority,
                 SERIALIZER.deserialize_entity(CTXT, message['payload']),
                 message['publisher_id'])
                for _, message, priority, _ in _impl_test.NOTIFICATIONS]
    yield read
    _impl_test.reset()


@pytest.fixture
def enabled_conf(conf):
    conf.set_override('driver', ['test'], 'oslo_messaging_notifications')
    conf.set_override('host', 'sched-1')
    return conf


@pytest.fixture
def notifier(enabled_conf):
    notifier = notifications.SelectDestinationsNotifier(enabled_conf,
                                                        'sched-1')
    yield notifier
    notifier._notifier.transport.cleanup()


def _spec(**fields):
    return fakes.request_spec(vcpus=2, memory_mb=1024, project_id='p1',
                              availability_zone='az1', **fields)


def _selections(*hosts):
    return [[objects.Selection(host=host, instance_uuid=uuid)]
            for host, uuid in zip(hosts, UUIDS)]


def _run(notifier, ctxt, spec, consumers, decide):
    try:
        with notifier.deciding(ctxt, spec, consumers) as decision:
            decision.selections = decide()
    finally:
        # sent by the notifier's thread, after the decision
        notifier.flush()
    return decision.selections


def test_disabled_by_default(conf, sent):
    notifier = notifications.SelectDestinationsNotifier(conf, 'sched-1')
    assert not notifier.enabled
    assert notifier._notifier is None
    result = _selections('h1')
    assert _run(notifier, CTXT, _spec(), None, lambda: result) is result
    assert sent() == []


def test_start_and_end(notifier, sent):
    result = _selections('h1', 'h2')
    assert _run(notifier, CTXT, _spec(num_instances=2), UUIDS[:2],
                         lambda: result) is result
    [start, end] = sent()
    assert [start[:2], end[:2]] == [
        ('scheduler.select_destinations.start', 'INFO'),
        ('scheduler.select_destinations.end', 'INFO')]
    assert {start[3], end[3]} == {'scheduler.sched-1'}
    for _, _, payload, _ in (start, end):
        assert isinstance(payload, objects.SelectDestinationsPayload)
        assert (payload.request_id, payload.project_id,
                payload.availability_zone, payload.num_instances) == \
            ('req-1', 'p1', 'az1', 2)
        assert payload.flavor.vcpus == 2
        assert payload.instance_uuids == UUIDS[:2]
    assert end[2].hosts == ['h1', 'h2']
    assert end[2].duration_ms >= 0
    assert start[2].get('hosts') in (None, [])


def test_end_names_the_consumers_the_driver_made_up(notifier, sent):
    # no instance_uuids: the driver generates them
    _run(notifier, CTXT, _spec(num_instances=3), None,
                  lambda: _selections('h1', 'h2', 'h3'))
    [start, end] = sent()
    assert start[2].num_instances == 3
    assert end[2].instance_uuids == UUIDS
    assert end[2].hosts == ['h1', 'h2', 'h3']


def test_error_on_no_valid_host(notifier, sent):
    def decide():
        raise exception.NoValidHost(reason='0/3 hosts')

    with pytest.raises(exception.NoValidHost):
        _run(notifier, CTXT, _spec(), UUIDS[:1], decide)
    [start, error] = sent()
    assert start[0] == 'scheduler.select_destinations.start'
    assert error[:2] == ('scheduler.select_destinations.error', 'ERROR')
    payload = error[2]
    assert payload.error_class == 'NoValidHost'
    assert '0/3 hosts' in payload.error
    assert payload.duration_ms >= 0
    assert payload.instance_uuids == UUIDS[:1]


@pytest.mark.parametrize('broken', ['info', 'error'])
def test_failing_notifier_never_fails_the_decision(notifier, sent, caplog,
                                                   broken):
    result = _selections('h1')

    def decide():
        if broken == 'error':
            raise exception.NoValidHost(reason='full')
        return result

    with mock.patch.object(notifier._notifier, broken,
                           side_effect=RuntimeError('broker down')), \
            caplog.at_level(logging.ERROR, 'scheduler.service.notifications'):
        if broken == 'error':
            # the decision's own exception, not the notifier's
            with pytest.raises(exception.NoValidHost):
                _run(notifier, CTXT, _spec(), None, decide)
        else:
            assert _run(notifier, CTXT, _spec(), None, decide) is result
    assert 'Could not send scheduler.select_destinations' in caplog.text


def test_manager_notifies_its_decisions(enabled_conf, db, sent):
    manager = composition.build_manager(enabled_conf, db)
    try:
        fakes.report(db, 'h1')
        spec = objects.RequestSpec(flavor=objects.Flavor(vcpus=1,
                                                         memory_mb=512))
        manager.select_destinations(CTXT, spec, instance_uuids=UUIDS[:1])
        manager.stop()      # sends what is queued
        events = sent()
        assert [e[0] for e in events] == [
            'scheduler.select_destinations.start',
            'scheduler.select_destinations.end']
        assert events[1][2].hosts == ['h1']
        assert events[1][3] == 'scheduler.sched-1'
    finally:
        manager.notifier._notifier.transport.cleanup()


def test_decision_does_not_wait_for_the_broker(notifier, sent):
    """The notifications of a decision are sent after it answered, in
    order, by the notifier's own thread."""
    import threading
    broker_up = threading.Event()
    real = notifier._notifier.info

    def slow_info(*args, **kwargs):
        broker_up.wait(10)
        return real(*args, **kwargs)

    result = _selections('h1')
    with mock.patch.object(notifier._notifier, 'info', slow_info):
        with notifier.deciding(CTXT, _spec(), UUIDS[:1]) as decision:
            decision.selections = result
        # answered while the broker still holds the first notification
        assert sent() == []
        broker_up.set()
        notifier.flush()
    assert [e[0] for e in sent()] == [
        'scheduler.select_destinations.start',
        'scheduler.select_destinations.end']


def test_queue_limit_drops_with_a_warning(notifier, sent, caplog,
                                          monkeypatch):
    import threading
    monkeypatch.setattr(notifications, 'QUEUE_LIMIT', 1)
    notifier._queue = notifications.queue.Queue(maxsize=1)
    broker_up = threading.Event()
    real = notifier._notifier.info

    def slow_info(*args, **kwargs):
        broker_up.wait(10)
        return real(*args, **kwargs)

    with mock.patch.object(notifier._notifier, 'info', slow_info), \
            caplog.at_level(logging.WARNING,
                            'scheduler.service.notifications'):
        for _ in range(4):
            with notifier.deciding(CTXT, _spec(), UUIDS[:1]) as decision:
                decision.selections = _selections('h1')
        broker_up.set()
        notifier.flush()
    assert 'Dropped scheduler.select_destinations' in caplog.text
    assert 1 <= len(sent()) < 8
