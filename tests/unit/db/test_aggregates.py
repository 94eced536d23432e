"""Aggregates pushed by their owner: saved, replaced and tombstoned, and
pulled by workers as changes after a feed position."""

import datetime

import pytest
from oslo_utils import timeutils

from scheduler import objects
from scheduler.db import aggregates as db_aggregates
from scheduler.db import changes

from .. import fakes

A1 = '1a2b3c4d-0000-4000-8000-000000000001'
A2 = '1a2b3c4d-0000-4000-8000-000000000002'


def _agg(uuid, hosts=(), name=None, **metadata):
    return objects.Aggregate(uuid=uuid, name=name, hosts=list(hosts),
                             metadata=metadata)


def _seq(db):
    with db.reader() as session:
        return changes.position(session)


def _by_uuid(changes):
    return {c['uuid']: c for c in changes}


def test_saved_aggregates_load_as_dicts(db):
    db_aggregates.save_aggregates(db, [
        _agg(A1, ['h2', 'h1'], 'fast', ssd='true'), _agg(A2)])
    found = _by_uuid(db_aggregates.load_aggregate_changes(db))
    assert found == {
        A1: {'uuid': A1, 'name': 'fast', 'deleted': False,
             'hosts': ['h1', 'h2'], 'metadata': {'ssd': 'true'}},
        A2: {'uuid': A2, 'name': None, 'deleted': False, 'hosts': [],
             'metadata': {}},
    }


def test_save_replaces_name_hosts_and_metadata(db):
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'], 'a', x='1',
                                            y='2')])
    db_aggregates.save_aggregates(db, [_agg(A1, ['h3'], 'b', y='3')])
    [agg] = db_aggregates.load_aggregate_changes(db)
    assert (agg['name'], agg['hosts'], agg['metadata']) == \
        ('b', ['h3'], {'y': '3'})


def test_changes_since_a_seq(db):
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'])])
    after_first = _seq(db)
    assert db_aggregates.load_aggregate_changes(db, since=after_first) == []
    db_aggregates.save_aggregates(db, [_agg(A2, ['h2'])])
    assert [c['uuid'] for c in db_aggregates.load_aggregate_changes(
        db, since=after_first)] == [A2]
    assert _seq(db) != after_first
    # an update of A1 shows up again
    mark = _seq(db)
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1', 'h9'])])
    [changed] = db_aggregates.load_aggregate_changes(db, since=mark)
    assert (changed['uuid'], changed['hosts']) == (A1, ['h1', 'h9'])


def test_delete_leaves_a_tombstone_workers_see(db):
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'], 'a', x='1'),
                                       _agg(A2, ['h2'])])
    mark = _seq(db)
    assert db_aggregates.delete_aggregate(db, A1) is True
    [tombstone] = db_aggregates.load_aggregate_changes(db, since=mark)
    assert tombstone == {'uuid': A1, 'name': 'a', 'deleted': True,
                         'hosts': [], 'metadata': {}}
    # deleting again, or an unknown aggregate, changes nothing
    mark = _seq(db)
    assert db_aggregates.delete_aggregate(db, A1) is False
    assert db_aggregates.delete_aggregate(db, A2[:-1] + '9') is False
    assert _seq(db) == mark


def test_saving_a_deleted_aggregate_revives_it(db):
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'])])
    db_aggregates.delete_aggregate(db, A1)
    db_aggregates.save_aggregates(db, [_agg(A1, ['h4'], 'back')])
    [agg] = db_aggregates.load_aggregate_changes(db)
    assert (agg['deleted'], agg['hosts'], agg['name']) == \
        (False, ['h4'], 'back')


@pytest.mark.parametrize('fields', [{}, {'name': 'x'}])
def test_unset_optional_fields_default(db, fields):
    db_aggregates.save_aggregates(db, [objects.Aggregate(uuid=A1,
                                                         **fields)])
    [agg] = db_aggregates.load_aggregate_changes(db)
    assert (agg['name'], agg['hosts'], agg['metadata']) == \
        (fields.get('name'), [], {})


T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, 1)


def _at(microseconds):
    return T0 + datetime.timedelta(microseconds=microseconds)


def test_an_older_update_never_undoes_a_newer_one(db):
    db_aggregates.save_aggregates(db, [_agg(A1, ['new'])], _at(2))
    assert db_aggregates.save_aggregates(db, [_agg(A1, ['old'])],
                                         _at(1)) == []
    [agg] = db_aggregates.load_aggregate_changes(db)
    assert agg['hosts'] == ['new']


def test_an_update_sent_before_a_delete_does_not_revive_it(db):
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'])], _at(1))
    db_aggregates.delete_aggregate(db, A1, _at(3))
    db_aggregates.save_aggregates(db, [_agg(A1, ['h2'])], _at(2))
    [agg] = db_aggregates.load_aggregate_changes(db)
    assert agg['deleted'] is True


def test_a_delete_arriving_before_its_create_wins(db):
    mark = _seq(db)
    assert db_aggregates.delete_aggregate(db, A1, _at(2)) is False
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'])], _at(1))
    assert db_aggregates.load_aggregate_changes(db, since=mark) == []
    # a later create (sent after the delete) does bring it back
    db_aggregates.save_aggregates(db, [_agg(A1, ['h9'])], _at(3))
    [agg] = db_aggregates.load_aggregate_changes(db, since=mark)
    assert (agg['deleted'], agg['hosts']) == (False, ['h9'])


def test_on_equal_send_times_the_delete_wins(db):
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'])], _at(1))
    assert db_aggregates.delete_aggregate(db, A1, _at(1)) is True
    assert db_aggregates.save_aggregates(db, [_agg(A1, ['h2'])],
                                         _at(1)) == []
    [agg] = db_aggregates.load_aggregate_changes(db)
    assert agg['deleted'] is True


def test_an_update_sent_from_the_future_is_ordered_as_of_now(db):
    """A sender's clock 290 s ahead (within max_clock_skew): the update
    counts as sent when this worker wrote it, so the delete sent after
    it wins, and so does a later update."""
    ahead = timeutils.utcnow() + datetime.timedelta(seconds=290)
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'])], ahead)
    assert db_aggregates.delete_aggregate(db, A1, timeutils.utcnow())
    db_aggregates.save_aggregates(db, [_agg(A1, ['h2'])], ahead)
    db_aggregates.save_aggregates(db, [_agg(A1, ['h3'])],
                                  timeutils.utcnow())
    [agg] = db_aggregates.load_aggregate_changes(db)
    assert (agg['deleted'], agg['hosts']) == (False, ['h3'])


def test_no_stripe_moved_no_change(db):
    """A position compared with itself asks for nothing."""
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'])])
    now = _seq(db)
    assert db_aggregates.load_aggregate_changes(db, since=now,
                                                until=now) == []


def test_only_aggregate_writes_move_the_row_stripes(db):
    """Workers read aggregates only when a row stripe moved: a provider's
    write never moves one, an aggregate's always does."""
    before = _seq(db)
    db_aggregates.save_aggregates(db, [_agg(A1, ['h1'])])
    after_aggregate = _seq(db)
    assert before.rows_moved(after_aggregate)
    fakes.report(db, 'h1')
    assert after_aggregate.moved(_seq(db))
    assert not after_aggregate.rows_moved(_seq(db))
