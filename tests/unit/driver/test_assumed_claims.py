"""Tentative claims of one worker: assumed while the claim is in flight,
forgotten in memory when it loses, confirmed when it commits; another
request of the same worker never gets a false NoValidHost from them."""

import threading

from scheduler.db import claims
from scheduler import context as sched_context
from scheduler import exception

from .. import fakes

USER = sched_context.RequestContext(project_id='p1', roles=['member'])


class _SlowClaims:
    """claim_resources that waits for ``release`` on its first call, then
    loses (ClaimConflict) or commits, as told."""

    def __init__(self, monkeypatch, lose):
        self.entered = threading.Event()
        self.release = threading.Event()
        self.lose = lose
        self.real = claims.claim_resources
        self.calls = 0
        monkeypatch.setattr(claims, 'claim_resources', self)

    def __call__(self, database, planned, *args, **kwargs):
        self.calls += 1
        if self.calls > 1:
            return self.real(database, planned, *args, **kwargs)
        self.entered.set()
        assert self.release.wait(10)
        if self.lose:
            raise exception.ClaimConflict(provider=planned[0].provider_id,
                                          resource_class='VCPU')
        return self.real(database, planned, *args, **kwargs)


def _first_request(driver, results):
    try:
        results.append(driver.select_destinations(
            USER, fakes.request_spec(vcpus=4)))
    except exception.NoValidHost as exc:
        results.append(exc)


def _second_while_first_in_flight(db, driver, monkeypatch, lose):
    fakes.report(db, 'only', vcpus=4, cpu_allocation_ratio=1.0)
    slow = _SlowClaims(monkeypatch, lose)
    first = []
    thread = threading.Thread(target=_first_request, args=(driver, first))
    thread.start()
    assert slow.entered.wait(10)
    # the first request's 4 VCPUs are assumed: nothing fits in memory
    assert driver.cache.table.free('VCPU').tolist() == [0]
    second = []
    other = threading.Thread(target=lambda: second.append(
        _try(driver, vcpus=2)))
    other.start()
    other.join(0.5)
    assert other.is_alive(), 'answered while the first claim was in flight'
    slow.release.set()
    thread.join(10)
    other.join(10)
    return first[0], second[0]


def _try(driver, **spec):
    try:
        return driver.select_destinations(USER, fakes.request_spec(**spec))
    except exception.NoValidHost as exc:
        return exc


def test_a_lost_claim_is_forgotten_and_frees_the_host_for_the_next(
        db, driver, monkeypatch):
    first, second = _second_while_first_in_flight(db, driver, monkeypatch,
                                                  lose=True)
    # the second waited instead of answering from the first's tentative
    # claim; whichever then claimed the host, the other's refusal is true
    # (4 + 2 VCPUs do not fit in 4), never both refused
    placed = [r for r in (first, second)
              if not isinstance(r, exception.NoValidHost)]
    assert len(placed) == 1
    assert driver.recorder.snapshot()['settle_waits'] >= 1
    table = driver.cache.table
    assert table.resources['VCPU'].assumed[0] == 0
    [row] = [a for a in claims.list_allocations(db)
             if a['resource_class'] == 'VCPU']
    assert row['amount'] == (4 if placed[0] is first else 2)


def test_a_committed_claim_makes_the_next_refusal_true(db, driver,
                                                       monkeypatch):
    first, second = _second_while_first_in_flight(db, driver, monkeypatch,
                                                  lose=False)
    assert first[0][0].host == 'only'
    assert isinstance(second, exception.NoValidHost)
    table = driver.cache.table
    assert table.resources['VCPU'].assumed[0] == 0
    assert table.resources['VCPU'].claimed[0] == 4


def test_a_confirmed_claim_survives_a_refresh_read_before_it(db, driver):
    fakes.report(db, 'h1', vcpus=8, cpu_allocation_ratio=1.0)
    driver.cache.refresh()
    table = driver.cache.table
    stale = fakes.provider(int(table.provider_id[0]), 'h1', vcpus=8,
                           cpu_allocation_ratio=1.0)
    epoch = table.confirm_epoch
    table.assume(0, {'VCPU': 3})
    table.confirm(0, {'VCPU': 3})
    # a refresh that read the row before the confirm must not erase it
    table.apply([stale], read_epoch=epoch)
    assert table.resources['VCPU'].claimed[0] == 3
    assert table.take_dirty() == {int(table.provider_id[0])}


def test_a_true_refusal_from_a_polled_view_is_answered(conf, db,
                                                       make_driver):
    # with a poller (refresh_interval > 0) the refusal is checked against
    # one forced refresh, then answered: not re-checked for ever
    fakes.report(db, 'h1', vcpus=2, cpu_allocation_ratio=1.0)
    driver = make_driver(refresh_interval=3600)
    driver.cache.refresh()
    driver.cache.start()
    try:
        assert driver.cache.polling
        answers = []
        asking = threading.Thread(target=lambda: answers.append(
            _try(driver, vcpus=4)), daemon=True)
        asking.start()
        asking.join(10)
        assert not asking.is_alive(), 'the refusal was never answered'
        assert isinstance(answers[0], exception.NoValidHost)
    finally:
        driver.cache.stop()
