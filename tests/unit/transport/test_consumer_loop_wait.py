"""The consumer loop's wait on descriptors (scheduler.transport.consumer_loop):
``poll``, so a socket numbered 1024 or more (a worker with many open
files) is waited on like any other; ``select`` raised for it, and the
loop took that for a lost connection, again and again."""

import os
import resource

import pytest

from scheduler.transport import consumer_loop

HIGH = 1100


@pytest.fixture
def high_pipe():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= HIGH + 1:
        pytest.skip('RLIMIT_NOFILE hard limit %d: no descriptor %d'
                    % (hard, HIGH))
    if soft != resource.RLIM_INFINITY and soft <= HIGH + 1:
        resource.setrlimit(resource.RLIMIT_NOFILE, (HIGH + 2, hard))
    r, w = os.pipe()
    os.dup2(r, HIGH)
    os.close(r)
    try:
        yield HIGH, w
    finally:
        os.close(HIGH)
        os.close(w)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_descriptor_above_1023_is_waited_on(high_pipe):
    r, w = high_pipe
    assert consumer_loop._wait_readable((r,), 0) == set()
    os.write(w, b'.')
    assert consumer_loop._wait_readable((r,), 1.0) == {r}


def test_a_closed_socket_is_a_lost_connection():
    with pytest.raises(ConnectionError):
        consumer_loop._wait_readable((-1,), 0)
