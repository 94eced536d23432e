"""Instances per host as trackers report them, and hosts_of(): where
given instances run or hold claims (the SameHost/DifferentHost input)."""

import datetime
import json

from oslo_utils import timeutils

from scheduler.db import claims
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.db import instances as db_instances

from .. import fakes

UUIDS = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5%d' % i for i in range(6)]


def _info(uuid, **fields):
    return objects.InstanceInfo(uuid=uuid, **fields)


def _uuids_on(db, host):
    return [r['uuid'] for r in db_instances.instances_on(db, host)]


def test_save_stores_what_filters_read(db):
    flavor = objects.Flavor(vcpus=2, memory_mb=2048, name='m1.small')
    db_instances.save_instances(db, 'h1', [_info(
        UUIDS[0], node='n1', project_id='p1', user_id='u1', flavor=flavor,
        image_properties={'os_distro': 'ubuntu'}, task_state='spawning',
        group_uuid=UUIDS[5])])
    [row] = db_instances.instances_on(db, 'h1')
    assert (row['uuid'], row['host'], row['node'], row['project_id'],
            row['group_uuid']) == (UUIDS[0], 'h1', 'n1', 'p1', UUIDS[5])
    attributes = json.loads(row['attributes'])
    assert attributes['image_properties'] == {'os_distro': 'ubuntu'}
    assert attributes['user_id'] == 'u1'
    assert attributes['task_state'] == 'spawning'
    assert objects.Flavor.obj_from_primitive(attributes['flavor']).name == \
        'm1.small'


def test_save_moves_an_instance_between_hosts(db):
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0]), _info(UUIDS[1])])
    db_instances.save_instances(db, 'h2', [_info(UUIDS[0], project_id='p2')])
    assert _uuids_on(db, 'h1') == [UUIDS[1]]
    [moved] = db_instances.instances_on(db, 'h2')
    assert (moved['uuid'], moved['project_id']) == (UUIDS[0], 'p2')


def test_delete_only_on_the_named_host(db):
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])])
    assert db_instances.delete_instance(db, 'h2', UUIDS[0]) == 0
    assert _uuids_on(db, 'h1') == [UUIDS[0]]
    assert db_instances.delete_instance(db, 'h1', UUIDS[0]) == 1
    assert _uuids_on(db, 'h1') == []
    assert db_instances.delete_instance(db, 'h1', UUIDS[0]) == 0


def test_prune_keeps_only_what_the_host_reports(db):
    db_instances.save_instances(db, 'h1', [_info(u) for u in UUIDS[:3]])
    db_instances.save_instances(db, 'h2', [_info(UUIDS[3])])
    assert db_instances.prune_host(db, 'h1', [UUIDS[1], UUIDS[4]]) == 2
    assert _uuids_on(db, 'h1') == [UUIDS[1]]
    assert db_instances.prune_host(db, 'h1', []) == 1
    assert _uuids_on(db, 'h1') == []
    assert _uuids_on(db, 'h2') == [UUIDS[3]]


def test_hosts_of_reported_and_claimed_instances(db):
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])])
    provider = fakes.report(db, 'h2')
    fakes.report(db, 'h3')
    claims.claim_resources(db, [claims.Claim(UUIDS[1], provider,
                                             {rcs.VCPU: 1})])
    assert db_instances.hosts_of(db, [UUIDS[0]]) == {'h1'}
    assert db_instances.hosts_of(db, [UUIDS[1]]) == {'h2'}
    assert db_instances.hosts_of(db, UUIDS[:3]) == {'h1', 'h2'}
    assert db_instances.hosts_of(db, [UUIDS[2]]) == set()
    assert db_instances.hosts_of(db, []) == set()
    # released claims no longer count
    claims.delete_allocations(db, UUIDS[1])
    assert db_instances.hosts_of(db, [UUIDS[1]]) == set()


T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, 1)


def _at(microseconds):
    return T0 + datetime.timedelta(microseconds=microseconds)


def test_two_reports_within_a_second_keep_their_order(db):
    db_instances.save_instances(db, 'h2', [_info(UUIDS[0])], _at(2))
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], _at(1))
    assert _uuids_on(db, 'h2') == [UUIDS[0]] and _uuids_on(db, 'h1') == []


def test_a_delete_is_not_undone_by_an_older_update(db):
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], _at(1))
    assert db_instances.delete_instance(db, 'h1', UUIDS[0], _at(3)) == 1
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], _at(2))
    assert _uuids_on(db, 'h1') == []


def test_a_delete_before_the_first_report_leaves_a_tombstone(db):
    assert db_instances.delete_instance(db, 'h1', UUIDS[1], _at(2)) == 0
    db_instances.save_instances(db, 'h1', [_info(UUIDS[1])], _at(1))
    assert _uuids_on(db, 'h1') == []


def test_a_sync_keeps_instances_reported_after_it_was_sent(db):
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], _at(1))
    db_instances.save_instances(db, 'h1', [_info(UUIDS[1])], _at(3))
    assert db_instances.prune_host(db, 'h1', [], _at(2)) == 1
    assert _uuids_on(db, 'h1') == [UUIDS[1]]


def test_on_equal_send_times_the_delete_wins(db):
    db_instances.delete_instance(db, 'h1', UUIDS[0], _at(1))
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], _at(1))
    db_instances.save_instances(db, 'h1', [_info(UUIDS[1])], _at(1))
    assert db_instances.delete_instance(db, 'h1', UUIDS[1], _at(1)) == 1
    assert _uuids_on(db, 'h1') == []


def test_a_second_delete_moves_the_tombstone_forward(db):
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], _at(1))
    db_instances.delete_instance(db, 'h1', UUIDS[0], _at(2))
    assert db_instances.delete_instance(db, 'h1', UUIDS[0], _at(4)) == 0
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], _at(3))
    assert _uuids_on(db, 'h1') == []


def test_a_delete_keeps_an_older_report_from_moving_it_back(db):
    """Moved to h2, then deleted on h1: a report of h1 sent before the
    delete does not bring the instance back to h1."""
    db_instances.save_instances(db, 'h2', [_info(UUIDS[0])], _at(1))
    assert db_instances.delete_instance(db, 'h1', UUIDS[0], _at(3)) == 0
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], _at(2))
    assert (_uuids_on(db, 'h1'), _uuids_on(db, 'h2')) == ([], [UUIDS[0]])


def test_an_update_sent_from_the_future_is_ordered_as_of_now(db):
    """A sender's clock 290 s ahead (within max_clock_skew): the update
    counts as sent when this worker wrote it; the delete sent after it
    wins."""
    ahead = timeutils.utcnow() + datetime.timedelta(seconds=290)
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], ahead)
    assert db_instances.delete_instance(db, 'h1', UUIDS[0],
                                        timeutils.utcnow()) == 1
    db_instances.save_instances(db, 'h1', [_info(UUIDS[0])], ahead)
    assert _uuids_on(db, 'h1') == [UUIDS[0]]
    [row] = db_instances.instances_on(db, 'h1')
    assert row['updated_at'] <= timeutils.utcnow()
