"""Hosts and requests the functional tests use.

``host_reports`` builds tracker reports for a cluster of mixed sizes,
``push_hosts`` sends them from a tracker process and waits until the
scheduler has stored them all, ``legacy_spec`` / ``object_spec`` build a
request in each of the two forms ``SchedulerClient`` accepts.
``run_conductors`` runs concurrent conductor threads to the end;
``wait_placing`` waits for a ``fault_load.Load``'s next placement.
"""

import threading
import time

from scheduler import objects
from scheduler.context import RequestContext
from tests.functional import db_state
from tests.functional import tracker

SHAPES = (
    {'vcpus': 8, 'memory_mb': 16384, 'local_gb': 200},
    {'vcpus': 16, 'memory_mb': 65536, 'local_gb': 500},
    {'vcpus': 32, 'memory_mb': 131072, 'local_gb': 1000},
)

FLAVORS = (
    {'name': 'tiny', 'vcpus': 1, 'memory_mb': 512, 'root_gb': 1},
    {'name': 'small', 'vcpus': 1, 'memory_mb': 2048, 'root_gb': 20},
    {'name': 'medium', 'vcpus': 2, 'memory_mb': 4096, 'root_gb': 40},
    {'name': 'large', 'vcpus': 4, 'memory_mb': 8192, 'root_gb': 60,
     'ephemeral_gb': 10, 'swap': 2048},
)


def context():
    return RequestContext(project_id='project-1', user_id='user-1',
                          roles=['service'])


def host_reports(count, disabled=(), prefix='host'):
    """Reports for ``count`` hosts cycling through SHAPES and two zones;
    hosts whose index is in ``disabled`` report disabled=True."""
    reports = []
    for index in range(count):
        shape = SHAPES[index % len(SHAPES)]
        stats = dict(shape,
                     vcpus_used=index % 3,
                     memory_mb_used=512 * (index % 4),
                     local_gb_used=10 * (index % 2),
                     cpu_allocation_ratio=2.0,
                     ram_allocation_ratio=1.0,
                     disk_allocation_ratio=1.0,
                     reserved_host_memory_mb=512,
                     availability_zone='az%d' % (1 + index % 2),
                     disabled=index in disabled,
                     hypervisor_type='QEMU')
        reports.append(('%s-%02d' % (prefix, index), stats))
    return reports


# a stored report reaches every worker's decisions with its next poll
# ([scheduler] refresh_interval, 0.1 s): ten of them, for a busy machine
POLL_BOUND = 1.0


def wait_polled():
    """Wait until every worker has polled what is stored now: the bound
    the scheduler promises (``POLL_BOUND``); a worker's poll shows
    nowhere outside it, so this is the one fixed wait for it."""
    time.sleep(POLL_BOUND)


def wait_placing(load, since=None, timeout=30):
    """Wait until ``load`` (a ``fault_load.Load``) got a placement
    answered after ``since`` (``time.monotonic()``; any, if None): the
    load is under way, or placing again after a fault."""
    db_state.wait_for(
        lambda: load.first_success_after(since or 0) is not None, timeout,
        'a placement under load%s' % ('' if since is None
                                      else ' after the mark'))


def push_hosts(server, reports, timeout=60):
    """Push ``reports`` from a tracker process; wait until all are stored
    and every worker has polled them (``POLL_BOUND``)."""
    tracker.push_stats(server, reports)
    expected = len({name if isinstance(name, str) else tuple(name)
                    for name, _ in reports})
    db_state.wait_for(
        lambda: db_state.provider_count(server.engine) >= expected,
        timeout, '%d hosts in the scheduler database' % expected)
    wait_polled()


def legacy_spec(flavor, instance_uuids, availability_zone=None):
    """The legacy nova ``request_spec`` dict for ``flavor``."""
    properties = {'project_id': 'project-1', 'user_id': 'user-1'}
    if availability_zone:
        properties['availability_zone'] = availability_zone
    return {'instance_type': dict(flavor),
            'instance_properties': properties,
            'instance_uuids': list(instance_uuids),
            'num_instances': len(instance_uuids)}


def object_spec(flavor, num_instances=1, **fields):
    """A RequestSpec object for ``flavor``."""
    return objects.RequestSpec(num_instances=num_instances,
                               flavor=objects.Flavor(**flavor),
                               project_id='project-1', user_id='user-1',
                               **fields)


def run_conductors(conductor, count, timeout):
    """Run ``conductor(seed)`` in ``count`` threads at once, seeds 0..N-1,
    and wait for all; returns the seconds they took. Fails the test if
    one is still running ``timeout`` seconds after its start."""
    threads = [threading.Thread(target=conductor, args=(seed,),
                                name='conductor-%d' % seed, daemon=True)
               for seed in range(count)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, started + timeout - time.monotonic()))
    assert not any(t.is_alive() for t in threads), 'conductors hung'
    return time.monotonic() - started
