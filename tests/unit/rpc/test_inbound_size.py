"""A JSON body larger than [limits] max_message_bytes is refused before
it is decoded; a body within the bound decodes as kombu's own JSON."""

import pytest
from kombu import exceptions as kombu_exc
from kombu import serialization

from scheduler.conf import limits
from scheduler.rpc import inbound

DEFAULT = {opt.name: opt.default
           for opt in limits.limits_opts}['max_message_bytes']


@pytest.fixture
def bound():
    inbound.install(1024)
    yield 1024
    # the registry is process-wide: leave the worker's default behind
    inbound.install(DEFAULT)


def _loads(body):
    return serialization.loads(body, 'application/json', 'utf-8')


def test_a_body_over_the_bound_is_refused_before_json(bound):
    # not even JSON: the size alone refuses it, nothing is decoded
    body = b'{not json' + b'x' * bound
    with pytest.raises(kombu_exc.DecodeError, match='max_message_bytes'):
        _loads(body)


def test_a_body_within_the_bound_decodes(bound):
    body = b'{"oslo.message": "' + b'x' * (bound - 40) + b'"}'
    assert len(body) <= bound
    assert _loads(body) == {'oslo.message': 'x' * (bound - 40)}


def test_the_default_bound_is_below_a_60_mib_body():
    """Issue 24 point 6: a 60 MiB body took a worker to 328 MB."""
    assert DEFAULT < 60 * 1024 * 1024
