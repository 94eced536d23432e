"""What a caller of SchedulerClient gets when the message cannot go out
(larger than ``[limits] max_message_bytes``) or no worker answers."""

import time
from unittest import mock

import oslo_messaging
import pytest

from scheduler import context as sched_context
from scheduler import exception
from scheduler.client import message_size
from scheduler import objects
from scheduler.client import SchedulerClient

CTXT = sched_context.RequestContext(project_id='p1', user_id='u1',
                                    roles=['service'])
AGG = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e51'
FLAVOR = {'vcpus': 2, 'memory_mb': 4096, 'root_gb': 20}


@pytest.fixture
def sent(transport):
    """What reached the transport (nothing is answered)."""
    messages = []
    with mock.patch.object(transport, '_send',
                           side_effect=lambda *a, **k: messages.append(a)):
        yield messages


def _client(conf, transport, limit):
    conf.set_override('max_message_bytes', limit, 'limits')
    return SchedulerClient(conf, transport=transport)


def test_a_message_past_the_limit_is_refused_before_sending(conf, transport,
                                                             sent):
    client = _client(conf, transport, 100000)
    hosts = ['compute-%06d.example.org' % i for i in range(5000)]
    with pytest.raises(exception.InvalidField) as caught:
        client.update_aggregates(CTXT, [{'uuid': AGG, 'name': 'big',
                                         'hosts': hosts, 'metadata': {}}])
    error = caught.value
    assert isinstance(error, exception.MessageTooLarge)
    assert error.kwargs['field'] == 'aggregates'
    assert error.kwargs['size'] > 5000 * 25 > 100000
    message = str(error)
    assert 'update_aggregates' in message and 'aggregates' in message
    assert '[limits] max_message_bytes (100000)' in message
    assert str(error.kwargs['size']) in message
    assert sent == []


def test_a_call_past_the_limit_names_its_argument(conf, transport, sent):
    client = _client(conf, transport, 2048)
    spec = objects.RequestSpec.from_primitives(
        {'instance_type': FLAVOR, 'num_instances': 1},
        {'scheduler_hints': {'note': ['x' * 3000]}})
    with pytest.raises(exception.MessageTooLarge,
                       match=r'field spec_obj: the select_destinations '
                             r'message would be \d+ bytes'):
        client.select_destinations(CTXT, spec)
    assert sent == []


def test_a_message_within_the_limit_is_sent_as_before(conf, transport,
                                                      sent):
    client = _client(conf, transport, 100000)
    client.update_aggregates(CTXT, [{'uuid': AGG, 'name': 'small',
                                     'hosts': ['h1'], 'metadata': {}}])
    [(target, _, message)] = [m[:3] for m in sent]
    [agg] = message['args']['aggregates']
    assert agg['scheduler_object.data']['hosts'] == ['h1']


def test_the_size_counts_the_escaping_of_the_envelope():
    # every quote of the arguments' JSON is escaped once more on the wire
    assert message_size.encoded_size(['a', 'b']) == len('["a", "b"]') + 4
    assert message_size.encoded_size('\\') == len('"\\\\"') + 4


def test_no_worker_answering_is_scheduler_unavailable(conf, transport):
    conf.set_override('topic', 'nobody-serves-this', 'scheduler')
    conf.set_override('rpc_response_timeout', 1)
    client = SchedulerClient(conf, transport=transport)
    started = time.monotonic()
    with pytest.raises(exception.SchedulerUnavailable) as caught:
        client.select_destinations(CTXT, {'instance_type': FLAVOR,
                                          'num_instances': 1})
    assert time.monotonic() - started < 10
    message = str(caught.value)
    assert 'No scheduler worker answered select_destinations within' in \
        message
    assert 'unconfirmed_claim_grace_period' in message
    assert '600 s' in message
    # callers written against oslo.messaging's exception still catch it
    assert isinstance(caught.value, oslo_messaging.MessagingTimeout)
    assert isinstance(caught.value, exception.ServiceUnavailable)
