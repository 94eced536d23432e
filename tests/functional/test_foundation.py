"""Issue 2: the service foundation, on SQLite, PostgreSQL and MariaDB.

A two-worker scheduler-server learns 50 hosts from a tracker process,
places instances requested in both request forms without overcommitting
any host, explains a NoValidHost, still knows its hosts after a restart,
and answers malformed input with an error while its workers keep serving.
"""

import os

import pytest
from oslo_utils import uuidutils

from scheduler import exception
from tests.functional import databases
from tests.functional import db_state
from tests.functional import workload

HOSTS = 50
DISABLED = frozenset({5, 17, 33})

pytestmark = pytest.mark.parametrize('backend', databases.BACKENDS)


def _start_cluster(scheduler):
    server = scheduler(workers=2)
    workload.push_hosts(server, workload.host_reports(HOSTS, DISABLED))
    return server


def _uuids(count):
    return [uuidutils.generate_uuid() for _ in range(count)]


def _place(client, index, uuids, flavor, zone=None, alternates=False):
    """Request ``uuids`` in the legacy form (odd index) or as an object."""
    ctxt = workload.context()
    if index % 2:
        return client.select_destinations(
            ctxt, workload.legacy_spec(flavor, uuids, zone),
            {'scheduler_hints': {}}, return_alternates=alternates)
    fields = {'availability_zone': zone} if zone else {}
    spec = workload.object_spec(flavor, len(uuids), **fields)
    return client.select_destinations(ctxt, spec, instance_uuids=uuids,
                                      return_alternates=alternates)


def _assert_consistent(server, placed, ignore_errors=()):
    """Claims match the selections, and no host is overcommitted."""
    state = db_state.read_state(server.engine)
    by_host = {p.host: p for p in state.values()}
    for uuid, (flavor, host, zone) in placed.items():
        rows = db_state.allocations(server.engine, uuid)
        assert {r['host'] for r in rows} == {host}, (uuid, rows)
        assert ({r['resource_class']: r['amount'] for r in rows}
                == db_state.resources_of(flavor)), (uuid, rows)
        assert not by_host[host].disabled, '%s is disabled' % host
        if zone:
            assert by_host[host].availability_zone == zone, (uuid, host)
    assert db_state.overcommit(state) == []
    for provider in state.values():
        for rc, inv in provider.inventories.items():
            assert inv.free() >= 0, (provider.host, rc, inv)
    total_rows = sum(len(db_state.resources_of(f))
                     for f, _, _ in placed.values())
    assert len(db_state.allocations(server.engine)) == total_rows
    assert server.errors_in_log(ignore=ignore_errors) == []


def _place_mixed(client, placed, count):
    """``count`` requests cycling through flavors, both request forms,
    one or two instances, a zone or none, with or without alternates."""
    for index in range(count):
        flavor = workload.FLAVORS[index % len(workload.FLAVORS)]
        uuids = _uuids(2 if index % 5 == 0 else 1)
        zone = 'az2' if index % 3 == 0 else None
        alternates = index % 4 == 1
        result = _place(client, index, uuids, flavor, zone, alternates)
        assert len(result) == len(uuids)
        for uuid, selections in zip(uuids, result):
            chosen, others = selections[0], selections[1:]
            assert not chosen.is_alternate
            assert chosen.instance_uuid == uuid
            assert chosen.allocation == db_state.resources_of(flavor)
            assert all(s.is_alternate and not s.allocation for s in others)
            if alternates:
                assert others, 'no alternates offered on a 50-host cloud'
            hosts = [s.host for s in selections]
            assert len(set(hosts)) == len(hosts), hosts
            placed[uuid] = (flavor, chosen.host, zone)


def test_placements_fit_explain_failures_and_survive_restart(scheduler):
    server = _start_cluster(scheduler)
    client = server.client()
    placed = {}
    _place_mixed(client, placed, 30)
    _assert_consistent(server, placed)

    huge = dict(workload.FLAVORS[0], name='huge', vcpus=1000)
    uuid = uuidutils.generate_uuid()
    with pytest.raises(exception.NoValidHost) as info:
        _place(client, 0, [uuid], huge)
    reason = info.value.reason
    assert reason.startswith('0/%d hosts' % HOSTS), reason
    assert '%d removed by ComputeFilter' % len(DISABLED) in reason, reason
    assert ('%d removed by ResourceFitFilter (VCPU: %d)'
            % (HOSTS - len(DISABLED), HOSTS - len(DISABLED))) in reason
    removed = {step['filter']: step['hosts_out']
               for step in info.value.diagnosis['steps']}
    assert removed.pop('ComputeFilter') == len(DISABLED)
    assert removed.pop('ResourceFitFilter') == HOSTS - len(DISABLED)
    assert not any(removed.values()), removed
    assert db_state.allocations(server.engine, uuid) == []
    _assert_consistent(server, placed)

    # a new server on the same database knows every host at once and
    # places without any tracker reporting again
    server.restart()
    assert server.count_in_log('with %d hosts' % HOSTS) == server.workers, (
        server.tail())
    before = len(placed)
    _place_mixed(client, placed, 8)
    assert len(placed) > before
    _assert_consistent(server, placed)




_UNKNOWN_OBJECT = {'scheduler_object.name': 'NoSuchObject',
                   'scheduler_object.namespace': 'scheduler',
                   'scheduler_object.version': '1.0',
                   'scheduler_object.data': {}}


def _future_spec():
    primitive = workload.object_spec(workload.FLAVORS[0]).obj_to_primitive()
    primitive['scheduler_object.version'] = '1.99'
    return primitive


# arguments of a raw select_destinations call -> what the error names
MALFORMED_CALLS = [
    ({'spec_obj': 'garbage'}, 'spec_obj'),
    ({'spec_obj': _UNKNOWN_OBJECT}, 'NoSuchObject'),
    ({'spec_obj': _future_spec()}, '1.99'),
    ({}, 'spec_obj'),
    ({'spec_obj': workload.object_spec(workload.FLAVORS[0]),
      'instance_uuids': ['not-a-uuid']}, 'instance_uuids'),
]

# update_resource_stats payloads the manager must reject with a warning
REJECTED_REPORTS = [
    {'name': 'bad-host-1', 'stats': {'vcpus': 'lots'}},
    {'name': 'bad-host-2', 'stats': {'no_such_field': 1}},
    {'name': 'bad-host-3', 'stats': 'garbage'},
    {'name': 'bad-host-4', 'stats': {'vcpus': -4}},
    {'name': 42, 'stats': {'vcpus': 4}},
    {'name': 'bad-host-5', 'stats': {'vcpus': 4, 'host': 'someone-else'}},
]


def test_bad_input_gets_an_error_and_workers_keep_serving(scheduler):
    server = _start_cluster(scheduler)
    pids = sorted(server.started_worker_pids())
    client = server.client()
    raw = server.raw_client(client)
    ctxt = workload.context()
    placed = {}
    # twice, so that both workers most likely see every case
    for round_ in range(2):
        for kwargs, named in MALFORMED_CALLS:
            with pytest.raises(exception.InvalidRequest) as info:
                raw.call(ctxt, 'select_destinations', **kwargs)
            assert named in str(info.value), (kwargs, str(info.value))
            uuid = uuidutils.generate_uuid()
            flavor = workload.FLAVORS[1]
            result = _place(client, round_, [uuid], flavor)
            placed[uuid] = (flavor, result[0][0].host, None)

    for kwargs in REJECTED_REPORTS:
        raw.cast(ctxt, 'update_resource_stats', **kwargs)
    # rejected while deserializing: no manager warning, just no effect
    raw.cast(ctxt, 'update_resource_stats', name='bad-host-6',
             stats=_UNKNOWN_OBJECT)
    db_state.wait_for(
        lambda: server.count_in_log('Rejected update_resource_stats')
        >= len(REJECTED_REPORTS), 30, 'the bad reports to be rejected')

    # the workers still place, and still store good reports
    for index in range(4):
        uuid = uuidutils.generate_uuid()
        flavor = workload.FLAVORS[index]
        result = _place(client, index, [uuid], flavor)
        placed[uuid] = (flavor, result[0][0].host, None)
    workload.push_hosts(server, [('late-host', workload.SHAPES[0])])
    names = {p.host for p in db_state.read_state(server.engine).values()}
    assert not {n for n in names if n.startswith('bad-host')}, names
    assert 'late-host' in names

    server.assert_alive()
    assert sorted(server.started_worker_pids()) == pids, \
        'a worker was restarted'
    assert 'died with status' not in server.log_text()
    for pid in pids:
        os.kill(pid, 0)  # raises if the worker is gone
    # oslo.versionedobjects itself logs an unknown object name at ERROR
    _assert_consistent(server, placed, ignore_errors=[
        'Unable to instantiate unregistered object type NoSuchObject'])
