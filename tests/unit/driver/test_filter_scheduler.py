"""FilterScheduler on SQLite: where instances go, what Selections say, and
which claims end up in the database."""

import collections
import logging

import pytest

from scheduler.db import claims
from scheduler import context as sched_context
from scheduler import exception
from scheduler.driver.diagnosis import Diagnosis
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.db import provider_reads

from .. import fakes

UUIDS = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e5%d' % i for i in range(6)]
CTXT = sched_context.RequestContext(project_id='p1')


def _claimed_hosts(db):
    """consumer -> host of its claims in the database."""
    return {a['consumer_uuid']: a['host']
            for a in claims.list_allocations(db)}


def _select(driver, **kwargs):
    spec_args = {k: kwargs.pop(k) for k in list(kwargs)
                 if k not in ('instance_uuids', 'return_alternates')}
    return driver.select_destinations(
        CTXT, fakes.request_spec(**spec_args), **kwargs)


def test_instance_goes_to_a_host_it_fits(db, driver):
    fakes.report(db, 'small', vcpus=1, cpu_allocation_ratio=1.0)
    big = fakes.report(db, 'big', vcpus=8)
    [[selection]] = _select(driver, vcpus=4, memory_mb=2048, root_gb=20,
                            instance_uuids=[UUIDS[0]])
    provider = provider_reads.list_providers(db)[0]
    assert provider['id'] == big
    assert (selection.host, selection.nodename) == ('big', 'big')
    assert selection.compute_node_uuid == provider['uuid']
    assert selection.instance_uuid == selection.allocation_id == UUIDS[0]
    assert selection.allocation == {rcs.VCPU: 4, rcs.MEMORY_MB: 2048,
                                    rcs.DISK_GB: 20}
    # limits: what the host may be filled up to (8 VCPUs * 4.0)
    assert selection.limits == {rcs.VCPU: 32, rcs.MEMORY_MB: 16384,
                                rcs.DISK_GB: 500}
    assert not selection.is_alternate
    assert isinstance(selection.weight, float)
    inventories = provider['inventories']
    assert inventories[rcs.VCPU]['claimed'] == 4
    assert inventories[rcs.DISK_GB]['claimed'] == 20
    assert _claimed_hosts(db) == {UUIDS[0]: 'big'}


def test_consumers_default_to_spec_uuids_then_new_ones(db, driver):
    fakes.report(db, 'h1')
    spec = fakes.request_spec(instance_uuids=[UUIDS[1]])
    [[selection]] = driver.select_destinations(CTXT, spec)
    assert selection.instance_uuid == UUIDS[1]
    result = driver.select_destinations(
        CTXT, fakes.request_spec(num_instances=2))
    generated = [s[0].instance_uuid for s in result]
    assert len(set(generated)) == 2 and UUIDS[1] not in generated
    assert set(_claimed_hosts(db)) == {UUIDS[1]} | set(generated)


def test_instances_spread_over_equal_hosts(db, driver):
    for name in ('h1', 'h2', 'h3'):
        fakes.report(db, name)
    result = _select(driver, num_instances=3, vcpus=2)
    assert sorted(s[0].host for s in result) == ['h1', 'h2', 'h3']
    # one request at a time spreads too
    more = [_select(driver, vcpus=2)[0][0].host for _ in range(3)]
    assert sorted(more) == ['h1', 'h2', 'h3']


def test_negative_multipliers_pack(conf, db, make_driver):
    conf.set_override('ram_weight_multiplier', -1.0, 'filter_scheduler')
    conf.set_override('cpu_weight_multiplier', -1.0, 'filter_scheduler')
    for name in ('h1', 'h2', 'h3'):
        fakes.report(db, name)
    result = _select(make_driver(), num_instances=3, vcpus=2)
    assert len({s[0].host for s in result}) == 1


def _picks(db, driver, count):
    picks = collections.Counter()
    for _ in range(count):
        [[selection]] = _select(driver, vcpus=1)
        picks[selection.host] += 1
        claims.delete_allocations(db, selection.allocation_id)
    return picks


def _report_sizes(db):
    fakes.report(db, 'biggest', vcpus=32, memory_mb=65536)
    fakes.report(db, 'second', vcpus=16, memory_mb=32768)
    fakes.report(db, 'small1')
    fakes.report(db, 'small2')


def test_host_subset_size_one_always_takes_the_best(db, driver):
    _report_sizes(db)
    assert _picks(db, driver, 5) == {'biggest': 5}


def test_host_subset_size_picks_among_the_best_n(conf, db, make_driver):
    conf.set_override('host_subset_size', 2, 'filter_scheduler')
    _report_sizes(db)
    picks = _picks(db, make_driver(seed=7), 12)
    assert set(picks) == {'biggest', 'second'}


def test_alternates_are_distinct_fitting_and_unclaimed(conf, db, driver):
    conf.set_override('max_attempts', 3, 'scheduler')
    driver.max_attempts = 3
    for i in range(5):
        fakes.report(db, 'h%d' % i)
    fakes.report(db, 'too-small', vcpus=1, cpu_allocation_ratio=1.0)
    result = _select(driver, num_instances=2, vcpus=2,
                     instance_uuids=UUIDS[:2], return_alternates=True)
    assert len(result) == 2
    for consumer, selections in zip(UUIDS, result):
        chosen, *alternates = selections
        assert len(alternates) == 2
        assert not chosen.is_alternate and chosen.allocation_id == consumer
        assert len({s.host for s in selections}) == 3
        assert 'too-small' not in {s.host for s in selections}
        for alternate in alternates:
            assert alternate.is_alternate
            assert alternate.instance_uuid == consumer
            assert alternate.allocation_id is None
            assert alternate.allocation == {}
            assert alternate.weight <= chosen.weight
    assert _claimed_hosts(db) == {UUIDS[0]: result[0][0].host,
                                  UUIDS[1]: result[1][0].host}


def test_alternates_limited_by_hosts_that_fit(db, driver):
    fakes.report(db, 'h1')
    fakes.report(db, 'h2')
    [selections] = _select(driver, return_alternates=True)
    assert [s.is_alternate for s in selections] == [False, True]


def test_no_alternates_unless_asked(db, driver):
    for i in range(3):
        fakes.report(db, 'h%d' % i)
    assert [len(s) for s in _select(driver, num_instances=2)] == [1, 1]


def test_tried_hosts_are_excluded(db, driver):
    fakes.report(db, 'best', vcpus=32)
    fakes.report(db, 'other')
    retry = objects.SchedulerRetries(num_attempts=1,
                                     hosts=[['best', 'best']])
    [[selection]] = _select(driver, retry=retry)
    assert selection.host == 'other'


def test_forced_host_and_zone(db, driver):
    fakes.report(db, 'a1', availability_zone='az1', vcpus=32)
    fakes.report(db, 'a2', availability_zone='az1')
    fakes.report(db, 'b1', availability_zone='az2', vcpus=64)
    assert _select(driver, availability_zone='az1')[0][0].host == 'a1'
    assert _select(driver, force_hosts=['a2'])[0][0].host == 'a2'


def test_rescheduling_a_consumer_moves_its_claim(db, driver):
    fakes.report(db, 'first', vcpus=32)
    fakes.report(db, 'second')
    [[selection]] = _select(driver, instance_uuids=[UUIDS[0]])
    assert selection.host == 'first'
    retry = objects.SchedulerRetries(num_attempts=1,
                                     hosts=[['first', 'first']])
    [[selection]] = _select(driver, retry=retry, instance_uuids=[UUIDS[0]])
    assert selection.host == 'second'
    assert _claimed_hosts(db) == {UUIDS[0]: 'second'}
    first = provider_reads.find_provider(db, 'first')['id']
    [inventory] = [p['inventories'][rcs.VCPU]
                   for p in provider_reads.list_providers(db)
                   if p['id'] == first]
    assert inventory['claimed'] == 0


@pytest.mark.parametrize('ratio, fits', [(1.0, 2), (2.0, 4)])
def test_consecutive_requests_fill_a_host_then_stop(db, driver, ratio,
                                                    fits):
    fakes.report(db, 'h1', vcpus=4, cpu_allocation_ratio=ratio)
    placed = 0
    for _ in range(fits):
        _select(driver, vcpus=2)
        placed += 1
    assert placed == fits
    assert sum(a['amount'] for a in claims.list_allocations(db)
               if a['resource_class'] == rcs.VCPU) == 2 * fits


@pytest.mark.parametrize('fields, expected', [
    ({}, None),
    ({'ignore_hosts': ['c2']}, ['c1', 'c3']),
    ({'vcpus': 3}, ['c3']),
], ids=['every row passes', 'a host ignored', 'a host too small'])
def test_candidates_are_the_tables_every_row_when_all_pass(
        db, driver, fields, expected):
    """Nothing removed: the table's read-only every_row() (the weighers
    then read whole columns); else the survivors in row order."""
    for name, vcpus in (('c1', 2), ('c2', 2), ('c3', 4)):
        fakes.report(db, name, vcpus=vcpus, cpu_allocation_ratio=1.0)
    driver.cache.refresh(force=True)
    table = driver.cache.table
    rows = driver.filter(table, fakes.request_state(**fields),
                          Diagnosis(table.size))
    if expected is None:
        assert rows is table.every_row()
    else:
        assert rows is not table.every_row()
        assert [table.hosts[r] for r in rows] == expected


def _decision_lines(caplog):
    return [(r.levelno, r.getMessage()) for r in caplog.records
            if r.getMessage().startswith('Decision ')]


@pytest.mark.parametrize('log_decisions, placed_level', [
    (False, logging.DEBUG), (True, logging.INFO)])
def test_a_decision_line_is_debug_unless_asked_a_refusal_info(
        conf, db, make_driver, caplog, log_decisions, placed_level):
    conf.set_override('log_decisions', log_decisions, 'scheduler')
    driver = make_driver()
    fakes.report(db, 'h1', vcpus=2)
    with caplog.at_level(logging.DEBUG,
                         logger='scheduler.driver.filter_scheduler'):
        _select(driver, vcpus=1, instance_uuids=[UUIDS[0]])
        with pytest.raises(exception.NoValidHost):
            _select(driver, vcpus=64, instance_uuids=[UUIDS[1]])
    [(placed, placed_text), (refused, refused_text)] = _decision_lines(
        caplog)
    assert (placed, refused) == (placed_level, logging.INFO)
    assert '%s -> h1;' % UUIDS[0] in placed_text
    assert '%s -> NoValidHost;' % UUIDS[1] in refused_text


def test_no_decision_line_is_built_when_its_level_is_off(
        db, driver, caplog):
    fakes.report(db, 'h1')
    with caplog.at_level(logging.INFO,
                         logger='scheduler.driver.filter_scheduler'):
        _select(driver, instance_uuids=[UUIDS[0]])
    assert _decision_lines(caplog) == []
