"""The solver driver on SQLite: the filter scheduler's contract (claims,
selections with alternates, NoValidHost with its diagnosis), with a
server group's instances placed at once; its fallback to the greedy
step; and the choice of driver by ``[scheduler] driver``."""

import collections

import numpy as np
import pytest

from scheduler.db import claims
from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.driver import filter_scheduler
from scheduler.driver import plugins
from scheduler.driver import solver
from scheduler.driver import solver_model
from scheduler.host_state import HostStateCache
from scheduler.service import composition
from scheduler.service import startup_checks

from .. import fakes

CTXT = sched_context.RequestContext(project_id='p1')
GROUP = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f'
C = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e%02d' % i for i in range(12)]
FILTERS = ['ComputeFilter', 'ResourceFitFilter',
           'ServerGroupAntiAffinityFilter', 'ServerGroupAffinityFilter']
WEIGHERS = ['RAMWeigher', 'CPUWeigher', 'ServerGroupSoftAffinityWeigher',
            'ServerGroupSoftAntiAffinityWeigher']
DRIVERS = {'filter_scheduler': filter_scheduler.FilterScheduler,
           'solver': solver.SolverScheduler}


@pytest.fixture
def make_driver(conf, db):
    conf.set_override('enabled_filters', FILTERS, 'filter_scheduler')
    conf.set_override('enabled_weighers', WEIGHERS, 'filter_scheduler')
    # generous: the machine running the tests may be busy
    conf.set_override('time_budget_ms', 5000, 'solver')

    def make(name='solver', **options):
        for option, (value, group) in options.items():
            conf.set_override(option, value, group)
        return DRIVERS[name](
            conf, db, HostStateCache(db), plugins.load_filters(conf),
            plugins.load_weighers(conf), rng=np.random.default_rng(0))
    return make


def _group(policy, uuid=GROUP, **rules):
    return objects.InstanceGroup(uuid=uuid, policy=policy, rules=rules)


def _select(driver, consumers, group=None, vcpus=1, alternates=False):
    spec = fakes.request_spec(vcpus=vcpus, num_instances=len(consumers),
                              instance_group=group)
    return driver.select_destinations(CTXT, spec, instance_uuids=consumers,
                                      return_alternates=alternates)


def _hosts(result):
    return [s[0].host for s in result]


def _big_ram_and_many_cpu(db):
    fakes.report(db, 'big-ram', vcpus=4, memory_mb=256 * 1024,
                 cpu_allocation_ratio=1.0)
    fakes.report(db, 'many-cpu', vcpus=32, memory_mb=64 * 1024)


def test_affinity_gang_is_solved_onto_the_host_that_holds_it(db,
                                                             make_driver):
    _big_ram_and_many_cpu(db)
    driver = make_driver()
    result = _select(driver, C[:3], _group('affinity'), vcpus=2)
    assert _hosts(result) == ['many-cpu'] * 3
    assert {a['consumer_uuid']: a['host']
            for a in claims.list_allocations(db)} == dict.fromkeys(
                C[:3], 'many-cpu')
    assert driver.outcomes == {'solved': 1}
    assert driver.recorder.totals()['solver'] == {'solved': 1}


def test_anti_affinity_respects_max_server_per_host(db, make_driver):
    for host in ('h1', 'h2', 'h3'):
        fakes.report(db, host)
    driver = make_driver()
    group = _group('anti-affinity', max_server_per_host='2')
    result = _select(driver, C[:5], group, alternates=True)
    assert sorted(collections.Counter(_hosts(result)).values()) == [1, 2, 2]
    for selections in result:
        # alternates as the greedy driver picks them: other hosts the
        # group still allows, never the destination
        assert all(s.is_alternate and s.host != selections[0].host
                   for s in selections[1:])
    # the claims enforce the group too: one more does not fit
    with pytest.raises(exception.NoValidHost):
        _select(driver, C[5:7], group)
    assert {a['consumer_uuid'] for a in claims.list_allocations(db)} == \
        set(C[:5])


def test_soft_anti_affinity_cost_spreads_a_packing_request(db,
                                                           make_driver):
    for host in ('h1', 'h2', 'h3'):
        fakes.report(db, host)
    driver = make_driver(
        ram_weight_multiplier=(-1.0, 'filter_scheduler'),
        cpu_weight_multiplier=(-1.0, 'filter_scheduler'),
        soft_anti_affinity_weight_multiplier=(5.0, 'filter_scheduler'))
    result = _select(driver, C[:3], _group('soft-anti-affinity'))
    assert sorted(_hosts(result)) == ['h1', 'h2', 'h3']


def test_requests_without_a_group_are_placed_greedily(db, make_driver):
    fakes.report(db, 'h1')
    driver = make_driver()
    assert _hosts(_select(driver, C[:2])) == ['h1', 'h1']
    assert _hosts(_select(driver, C[2:3], _group('affinity'))) == ['h1']
    assert driver.outcomes == {'greedy': 2}


def test_no_answer_in_time_falls_back_to_greedy(db, make_driver,
                                                  monkeypatch, caplog):
    _big_ram_and_many_cpu(db)
    driver = make_driver()
    monkeypatch.setattr(solver_model, 'solve', lambda *a, **k:
                        solver_model.Solution(solver_model.TIMED_OUT))
    caplog.set_level('INFO', logger=solver.__name__)
    result = _select(driver, C[:3], _group('affinity'), vcpus=2)
    assert _hosts(result) == ['many-cpu'] * 3
    assert driver.outcomes == {'timed_out': 1}
    [line] = [r.getMessage() for r in caplog.records
              if r.name == solver.__name__]
    assert line.startswith('Solver: timed out for 3 instances over 2 of 2 '
                           'hosts')


def test_hosts_left_out_of_the_model_are_tried_greedily(db, make_driver):
    # the model only sees the best host (big-ram), which cannot hold the
    # gang; the greedy step over every host can
    _big_ram_and_many_cpu(db)
    driver = make_driver(max_candidates=(1, 'solver'),
                         cpu_weight_multiplier=(0.001, 'filter_scheduler'))
    result = _select(driver, C[:3], _group('affinity'), vcpus=2)
    assert _hosts(result) == ['many-cpu'] * 3
    assert driver.outcomes == {'infeasible': 1}


@pytest.mark.parametrize('name', sorted(DRIVERS))
def test_no_placement_is_the_same_no_valid_host(db, make_driver, name):
    for host in ('h1', 'h2'):
        fakes.report(db, host)
    driver = make_driver(name)
    with pytest.raises(exception.NoValidHost) as info:
        _select(driver, C[:3], _group('anti-affinity'))
    assert info.value.reason == (
        '2/2 hosts; only 2 of 3 instances fit, '
        'none placed; server group %s (anti-affinity) rules out the 2 '
        'host(s) that fit' % GROUP)
    assert claims.list_allocations(db) == []


@pytest.mark.parametrize('name', sorted(DRIVERS))
def test_the_option_picks_the_driver(conf, db, name):
    conf.set_override('driver', name, 'scheduler')
    manager = composition.build_manager(conf, db)
    try:
        assert type(manager.driver) is DRIVERS[name]
    finally:
        manager.stop()


def test_an_unknown_driver_stops_start_up_in_one_line(conf, tmp_path):
    path = tmp_path / 'scheduler.conf'
    path.write_text('[scheduler]\ndriver = greedy\n')
    conf(['--config-file', str(path)])
    with pytest.raises(exception.ConfigInvalid) as info:
        startup_checks.check_config(conf)
    assert str(info.value) == (
        "Invalid configuration: invalid value for [scheduler] driver: "
        "unknown driver 'greedy'; available in scheduler.drivers: "
        "filter_scheduler, solver")
