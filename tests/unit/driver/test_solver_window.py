"""Windowed batches of the solver driver (``[solver] batch_window_ms``):
the window model (``solver_model.solve_window``), the gathering of a
window (``solver_window.Window``) and requests of one window placed
where one at a time they would not be, claimed all or nothing each."""

import threading

import numpy as np
import pytest

from scheduler.db import claims
from scheduler import exception
from scheduler.driver import solver_model
from scheduler.driver import solver_window

from scheduler.driver import plugins
from scheduler.driver import solver
from scheduler.host_state import HostStateCache
from tests import waiting

from .test_solver import C
from .test_solver import CTXT
from .test_solver import FILTERS
from .test_solver import WEIGHERS
from .. import fakes


@pytest.fixture
def make_solver(conf, db):
    conf.set_override('enabled_filters', FILTERS, 'filter_scheduler')
    conf.set_override('enabled_weighers', WEIGHERS, 'filter_scheduler')
    # generous: the machine running the tests may be busy
    conf.set_override('time_budget_ms', 5000, 'solver')

    def make(window_ms=0.0):
        conf.set_override('batch_window_ms', window_ms, 'solver')
        return solver.SolverScheduler(
            conf, db, HostStateCache(db), plugins.load_filters(conf),
            plugins.load_weighers(conf), rng=np.random.default_rng(0))
    return make


def _member(rows, cap, count, units, affinity=False, weights=None):
    rows = np.asarray(rows)
    return solver_model.Member(
        rows, np.zeros(len(rows)) if weights is None else
        np.asarray(weights, dtype=float), np.asarray(cap), count,
        {'R': units}, affinity)


def test_the_window_places_the_most_instances_whole_requests_only():
    free = {'R': np.array([8, 8])}
    one_big = _member([0, 1], [1, 1], 1, 8)
    gang = _member([0, 1], [2, 2], 2, 4, affinity=True)
    single = _member([0, 1], [1, 1], 1, 6)
    solution = solver_model.solve_window([one_big, gang, single], free, 5)
    assert solution.status == solver_model.OPTIMAL
    # the big one left out: the gang on one host, the single on the other
    big, gang_counts, single_counts = solution.counts
    assert big.tolist() == [0, 0]
    assert sorted(gang_counts.tolist()) == [0, 2]
    assert (gang_counts + single_counts).tolist() in ([2, 1], [1, 2])


def test_the_window_follows_the_weights_between_equal_answers():
    free = {'R': np.array([4, 4, 4])}
    first = _member([0, 1, 2], [1, 1, 1], 1, 4, weights=[0.1, 0.9, 0.5])
    second = _member([0, 1, 2], [1, 1, 1], 1, 4, weights=[0.1, 0.9, 0.5])
    solution = solver_model.solve_window([first, second], free, 5)
    placed = solution.counts[0] + solution.counts[1]
    assert placed.tolist() == [0, 1, 1]


def test_requests_within_a_window_are_planned_once_together():
    planned = []
    arrived = threading.Event()

    def wait_for_the_second(seconds):
        assert arrived.wait(5)

    window = solver_window.Window(
        0.01, lambda specs: planned.append(list(specs)) or
        ['hint-' + s for s in specs], sleep=wait_for_the_second)
    answers = {}
    leader = threading.Thread(
        target=lambda: answers.setdefault('a', window.join('a')))
    leader.start()
    waiting.wait_for(lambda: window._open is not None, 5,
                     'the leader to open the window', interval=0.001)
    follower = threading.Thread(
        target=lambda: answers.setdefault('b', window.join('b')))
    follower.start()
    waiting.wait_for(lambda: len(window._open.specs) >= 2, 5,
                     'the follower to join', interval=0.001)
    arrived.set()
    leader.join(5)
    follower.join(5)
    assert planned == [['a', 'b']]
    assert answers == {'a': 'hint-a', 'b': 'hint-b'}
    assert window.sizes == [2]


def test_a_request_alone_in_its_window_has_no_hint():
    window = solver_window.Window(0.0, pytest.fail, sleep=lambda s: None)
    assert window.join('a') is None


def test_a_window_that_fails_leaves_its_requests_alone(caplog):
    def broken(specs):
        raise RuntimeError('boom')

    def another_joins(seconds):
        window._open.specs.append('b')

    window = solver_window.Window(0.0, broken, sleep=another_joins)
    caplog.set_level('ERROR', logger=solver_window.__name__)
    assert window.join('a') is None
    assert 'a window of 2 requests could not be planned' in caplog.text


def _hosts(db):
    # placed first by the RAM weigher, but the gang needs its 4 vCPUs
    fakes.report(db, 'wide', vcpus=4, memory_mb=64 * 1024,
                 cpu_allocation_ratio=1.0)
    fakes.report(db, 'narrow', vcpus=2, memory_mb=8 * 1024,
                 cpu_allocation_ratio=1.0)


def _single():
    return fakes.request_spec(vcpus=2, num_instances=1)


def _gang():
    from scheduler import objects
    return fakes.request_spec(
        vcpus=2, num_instances=2, instance_group=objects.InstanceGroup(
            uuid='8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f', policy='affinity',
            rules={}))


def test_one_at_a_time_the_gang_after_the_single_is_refused(db,
                                                            make_solver):
    _hosts(db)
    driver = make_solver()
    driver.select_destinations(CTXT, _single(), instance_uuids=C[:1])
    with pytest.raises(exception.NoValidHost):
        driver.select_destinations(CTXT, _gang(), instance_uuids=C[1:3])


def test_one_window_places_both_and_claims_each(db, make_solver):
    _hosts(db)
    driver = make_solver(1000.0)
    window = driver.window

    def until_both_joined(seconds):
        waiting.wait_for(lambda: len(window._open.specs) >= 2, 5,
                         'both requests in the window', interval=0.001)

    window._sleep = until_both_joined
    answers = {}

    def select(name, spec, consumers):
        answers[name] = driver.select_destinations(
            CTXT, spec, instance_uuids=consumers)

    threads = [threading.Thread(target=select, args=('single', _single(),
                                                      C[:1])),
               threading.Thread(target=select, args=('gang', _gang(),
                                                     C[1:3]))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert [s[0].host for s in answers['single']] == ['narrow']
    assert [s[0].host for s in answers['gang']] == ['wide', 'wide']
    assert {a['consumer_uuid']: a['host']
            for a in claims.list_allocations(db)} == {
        C[0]: 'narrow', C[1]: 'wide', C[2]: 'wide'}
    assert window.sizes == [2]
    assert driver.outcomes['batched'] == 2


def test_a_hint_that_no_longer_holds_is_planned_anew(db, make_solver):
    _hosts(db)
    narrow = fakes.report(db, 'narrow', vcpus=2, memory_mb=8 * 1024,
                          cpu_allocation_ratio=1.0)
    driver = make_solver(1.0)
    driver.window.join = lambda spec: [narrow, narrow]   # 4 vCPUs: no
    result = driver.select_destinations(CTXT, _gang(),
                                        instance_uuids=C[:2])
    assert [s[0].host for s in result] == ['wide', 'wide']
    assert driver.outcomes['hint_stale'] == 1
