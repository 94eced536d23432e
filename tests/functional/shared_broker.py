"""The shared RabbitMQ on 127.0.0.1 as one test process sees it.

Each test process (a pytest-xdist worker, or pytest alone) gets a vhost
of its own, ``sched-test-<worker>-<pid>``, made on first use with
``rabbitmqctl add_vhost`` and ``set_permissions`` for guest, and deleted
at the end of the session (``tests/functional/conftest.py``); vhosts of
test processes that no longer run are deleted when a new one is made.
Names on the broker that a test cannot choose (nova's client calls topic
``scheduler``) are then its process's alone, without taking turns.

``transport_url()`` and ``amqp_url()`` point at that vhost. Where
``rabbitmqctl`` cannot reach the node (not root, no Erlang cookie) the
tests share ``/`` outside CI, each on a topic of its own; a test that
needs the vhost or the queue counts skips then (``require``), and fails
under ``CI=true``.

``queue_counts(queue)`` is what the broker holds for a queue now: the
messages ready and those delivered but not acknowledged (the servers
acknowledge a message once handled, so ``drained(queue)`` means every
message sent to it was handled; ``drained(prefix, every=True)``: to
every queue whose name starts so, e.g. a topic and its fanout queues).
"""

import functools
import os
import subprocess

from tests.functional import services

PREFIX = 'sched-test-'
HOST_PORT = '127.0.0.1:5672'
_CTL_TIMEOUT = 60


def _ctl(*args):
    result = subprocess.run(['rabbitmqctl', '-q', *args],
                            capture_output=True, text=True,
                            timeout=_CTL_TIMEOUT)
    if result.returncode != 0:
        raise RuntimeError('rabbitmqctl %s failed (%d): %s' % (
            ' '.join(args), result.returncode,
            (result.stderr or result.stdout).strip()[-500:]))
    return result.stdout


@functools.cache
def problem():
    """Why rabbitmqctl cannot manage the shared node, or None."""
    try:
        _ctl('list_vhosts')
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as exc:
        return '%s: %s' % (type(exc).__name__, exc)
    return None


def require():
    """Skip the calling test (fail it under ``CI=true``) unless this
    process has a vhost of its own and rabbitmqctl works."""
    services.require('rabbitmq')
    services.require_here(problem(), 'rabbitmqctl on the shared RabbitMQ')


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale():
    """Delete the vhosts of test processes that are gone (a session
    that was killed never deleted its own)."""
    for name in _ctl('list_vhosts', '--no-table-headers').split():
        pid = name.rsplit('-', 1)[-1]
        if (name.startswith(PREFIX) and pid.isdigit()
                and not _alive(int(pid))):
            _ctl('delete_vhost', name)


_made = []


def vhost():
    """This process's vhost, made on first use ('/' where rabbitmqctl
    does not work, outside CI)."""
    if _made:
        return _made[0]
    if problem() is not None:
        if os.environ.get('CI') == 'true':
            require()
        return '/'
    name = '%s%s-%d' % (PREFIX, os.environ.get('PYTEST_XDIST_WORKER',
                                               'main'), os.getpid())
    _remove_stale()
    _ctl('add_vhost', name)
    _ctl('set_permissions', '-p', name, 'guest', '.*', '.*', '.*')
    _made.append(name)
    return name


def remove_vhost():
    """Delete this process's vhost, if it made one (session end)."""
    while _made:
        _ctl('delete_vhost', _made.pop())


def _path():
    name = vhost()
    return '' if name == '/' else name


def transport_url():
    """oslo.messaging's URL of the shared broker, this process's vhost."""
    return 'rabbit://guest:guest@%s/%s' % (HOST_PORT, _path())


def amqp_url():
    """kombu's URL of the same."""
    return 'amqp://guest:guest@%s/%s' % (HOST_PORT, _path() or '/')


def _queues():
    """{queue name: (messages ready, messages unacknowledged)} now."""
    require()
    out = _ctl('list_queues', '-p', vhost(), '--no-table-headers', 'name',
               'messages_ready', 'messages_unacknowledged')
    counts = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3:
            counts[fields[0]] = (int(fields[1]), int(fields[2]))
    return counts


def queue_counts(queue):
    """(messages ready, messages unacknowledged) in ``queue`` now, or
    None while the queue does not exist."""
    return _queues().get(queue)


def drained(queue, every=False):
    """Every message sent to ``queue`` (or, with ``every``, to each
    queue whose name starts with ``queue``; at least one) was handled:
    none is ready, none is being handled (unacknowledged)."""
    if not every:
        return queue_counts(queue) == (0, 0)
    counts = [held for name, held in _queues().items()
              if name.startswith(queue)]
    return bool(counts) and all(held == (0, 0) for held in counts)
