"""NoValidHost: all-or-nothing multi-instance requests, the diagnosis and
its reason text, and who may see host names in it."""

import datetime

import numpy as np
import pytest

from scheduler.db import claims
from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.db import aggregates as db_aggregates
from scheduler.db import api as db_api
from scheduler.db import models

from .. import fakes

USER = sched_context.RequestContext(project_id='p1', roles=['member'])


def _no_valid_host(driver, ctxt=USER, **spec_fields):
    with pytest.raises(exception.NoValidHost) as info:
        driver.select_destinations(ctxt, fakes.request_spec(**spec_fields))
    return info.value


def _allocation_rows(db):
    with db.reader() as session:
        return session.execute(
            models.allocations.select()).all()


def test_multi_instance_request_is_all_or_nothing(db, driver):
    for name in ('h1', 'h2', 'h3'):
        fakes.report(db, name, vcpus=2, cpu_allocation_ratio=1.0)
    error = _no_valid_host(driver, vcpus=2, num_instances=4)
    assert 'only 3 of 4 instances fit, none placed' in error.reason
    assert _allocation_rows(db) == []
    table = driver.cache.table
    assert table.resources['VCPU'].claimed[:table.size].tolist() == [0] * 3
    # nothing leaked: three instances still fit
    assert len(driver.select_destinations(
        USER, fakes.request_spec(vcpus=2, num_instances=3))) == 3


def test_reason_counts_hosts_removed_by_each_filter(db, driver):
    for name in ('c1', 'c2', 'c3'):
        fakes.report(db, name, vcpus=2)
    error = _no_valid_host(driver, vcpus=3)
    assert error.reason == '0/3 hosts: 3 removed by ResourceFitFilter ' \
        '(VCPU: 3)'
    assert str(error) == 'No valid host was found. ' + error.reason
    # the worker's metrics count the hosts each filter removed
    assert driver.recorder.totals()['rejected'] == {'ResourceFitFilter': 3}


def test_reason_walks_the_whole_pipeline(db, driver):
    long_ago = datetime.datetime.now(datetime.timezone.utc) - \
        datetime.timedelta(hours=1)
    fakes.report(db, 'off', disabled=True, availability_zone='az1')
    fakes.report(db, 'quiet', updated_at=long_ago, availability_zone='az1')
    fakes.report(db, 'elsewhere', availability_zone='az2')
    fakes.report(db, 'tiny', memory_mb=256, availability_zone='az1')
    fakes.report(db, 'forbidden', availability_zone='az1')
    error = _no_valid_host(driver, availability_zone='az1', memory_mb=1024,
                           ignore_hosts=['forbidden'])
    assert error.reason == (
        '0/5 hosts: 1 removed by RequestedHosts '
        '(force/ignore/retry/destination), 2 removed by ComputeFilter '
        '(1 disabled, 1 not reporting for 60s), 1 removed by '
        "AvailabilityZoneFilter (not in zone 'az1'), 1 removed by "
        'ResourceFitFilter (MEMORY_MB: 1)')
    steps = error.diagnosis['steps']
    assert [(s['filter'], s['hosts_in'], s['hosts_out']) for s in steps] \
        == [('RequestedHosts', 5, 1), ('ComputeFilter', 4, 2),
            ('AvailabilityZoneFilter', 2, 1), ('ResourceFitFilter', 1, 1)]
    assert error.diagnosis['total_hosts'] == 5
    assert error.diagnosis['claim_conflicts'] == 0


def test_empty_cloud_says_no_host_has_reported(db, driver):
    reason = _no_valid_host(driver).reason
    assert reason.startswith('0/0 hosts: no hosts have reported yet')
    assert 'update_resource_stats' in reason


def test_admin_sees_host_names(db, driver):
    for name in ('compute-a', 'compute-b'):
        fakes.report(db, name, vcpus=2)
    ctxt = sched_context.RequestContext(roles=['member', 'admin'])
    error = _no_valid_host(driver, ctxt, vcpus=3)
    assert error.reason == ('0/2 hosts: 2 removed by ResourceFitFilter '
                            '(VCPU: 2; hosts: compute-a, compute-b)')
    [fit] = [s for s in error.diagnosis['steps']
             if s['filter'] == 'ResourceFitFilter']
    assert fit['removed'] == ['compute-a', 'compute-b']


@pytest.mark.parametrize('ctxt', [
    USER,
    # the is_admin flag is the sender's claim: only the admin role counts
    sched_context.RequestContext(is_admin=True, roles=['service']),
], ids=['member', 'is_admin-flag'])
def test_non_admin_sees_no_host_names(db, driver, ctxt):
    for name in ('compute-a', 'compute-b'):
        fakes.report(db, name, vcpus=2)
    error = _no_valid_host(driver, ctxt, vcpus=3)
    assert 'compute-' not in error.reason
    assert 'compute-' not in repr(error.diagnosis)
    assert all('removed' not in s for s in error.diagnosis['steps'])


def test_admin_host_list_is_truncated(db, driver):
    for i in range(25):
        fakes.report(db, 'h%02d' % i, vcpus=1)
    error = _no_valid_host(driver, sched_context.get_admin_context(),
                           vcpus=2)
    assert error.reason.endswith('h19 and 5 more)')


def test_stale_view_conflict_replans_on_another_host(conf, db, make_driver):
    fakes.report(db, 'big', vcpus=16, cpu_allocation_ratio=1.0)
    fakes.report(db, 'small', vcpus=8, cpu_allocation_ratio=1.0)
    # a long refresh interval: the worker keeps its view between requests
    driver = make_driver(refresh_interval=3600)
    driver.cache.refresh()
    big_id = int(driver.cache.table.provider_id[0])
    # another worker, with its own connection pool, fills "big"
    other_worker = db_api.Database(conf)
    try:
        claims.claim_resources(other_worker, [claims.Claim(
            '11111111-2222-4333-8444-555555555555', big_id, {'VCPU': 16})])
    finally:
        other_worker.dispose()
    [[selection]] = driver.select_destinations(
        USER, fakes.request_spec(vcpus=4))
    assert selection.host == 'small'
    assert driver.claim_conflicts == 1
    vcpu = driver.cache.table.resources['VCPU']
    assert vcpu.claimed[:2].tolist() == [16, 4]


def test_endless_conflicts_give_up(conf, db, make_driver, monkeypatch):
    conf.set_override('claim_retries', 2, 'scheduler')
    fakes.report(db, 'h1')
    driver = make_driver()

    def always_lose(database, planned, *args, **kwargs):
        raise exception.ClaimConflict(provider=planned[0].provider_id,
                                      resource_class='VCPU')

    monkeypatch.setattr(claims, 'claim_resources', always_lose)
    error = _no_valid_host(driver)
    assert error.reason == ('1/1 hosts; gave up after 3 claim attempts; '
                            '3 claim conflicts with other workers')
    assert error.diagnosis['claim_conflicts'] == 3
    assert driver.claim_conflicts == 3
    # the tentative claims of the lost plans are gone from memory
    assert driver.cache.table.resources['VCPU'].claimed[0] == 0


def test_unexpected_claim_error_drops_tentative_claims(db, driver,
                                                       monkeypatch):
    fakes.report(db, 'h1')

    def broken(database, planned, *args, **kwargs):
        raise RuntimeError('database went away')

    monkeypatch.setattr(claims, 'claim_resources', broken)
    with pytest.raises(RuntimeError):
        driver.select_destinations(USER, fakes.request_spec(vcpus=2))
    assert driver.cache.table.resources['VCPU'].claimed[0] == 0
    assert np.all(driver.cache.table.resources['MEMORY_MB'].claimed == 0)


def test_own_report_waits_for_the_poll_and_costs_a_retry_at_most(
        db, make_driver):
    fakes.report(db, 'a', vcpus=8, cpu_allocation_ratio=1.0)
    fakes.report(db, 'b', vcpus=8, cpu_allocation_ratio=1.0)
    driver = make_driver(refresh_interval=3600)
    driver.cache.refresh()
    # this worker stores a tracker report: "a" is now full; the decision
    # does not read the feed for it (reports flow all the time)
    fakes.report(db, 'a', vcpus=8, vcpus_used=8, cpu_allocation_ratio=1.0)
    assert not driver.cache.behind_own_writes()
    for _ in range(3):
        [[selection]] = driver.select_destinations(
            USER, fakes.request_spec(vcpus=2))
        assert selection.host == 'b'
    # a plan on the stale "a" lost its claim once, which re-read "a"
    assert driver.claim_conflicts <= 1


def test_own_aggregate_write_reaches_the_next_decision(db, make_driver):
    driver = make_driver(refresh_interval=3600)
    fakes.report(db, 'a')
    driver.cache.refresh()
    db_aggregates.save_aggregates(db, [objects.Aggregate(
        uuid='0d7e1c7a-3b8e-4a55-9c1e-2f1b6c9d8e01', name='gone',
        hosts=['a'], metadata={})])
    assert driver.cache.behind_own_writes()


def test_other_workers_report_waits_for_the_poll_but_never_overcommits(
        conf, db, make_driver):
    fakes.report(db, 'only', vcpus=4, cpu_allocation_ratio=1.0)
    driver = make_driver(refresh_interval=3600)
    driver.cache.refresh()
    other_worker = db_api.Database(conf)
    try:
        fakes.report(other_worker, 'only', vcpus=4, vcpus_used=3,
                     cpu_allocation_ratio=1.0)
    finally:
        other_worker.dispose()
    vcpu = driver.cache.table.resources['VCPU']
    assert vcpu.reported_used[0] == 0  # not read yet: no round trip
    # the stale view offers 4 VCPU, the claim checks the 1 left in SQL
    # and the forced refresh before the refusal shows the truth
    _no_valid_host(driver, USER, vcpus=2)
    assert vcpu.reported_used[0] == 3
    [[selection]] = driver.select_destinations(
        USER, fakes.request_spec(vcpus=1))
    assert selection.host == 'only'
