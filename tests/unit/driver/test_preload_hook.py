"""The plugins' preload hook: a filter or weigher that needs stored data
declares it in ``preload(request, store)`` and finds the answer in the
request state; the driver runs every enabled plugin's hook, once per
planning attempt, under the 'preload' phase, and names none of them.

The probe plugins (``probe_plugins``) are registered as entry points of a
distribution of their own and enabled by name, as any plugin is: nothing
of the driver changes for them."""

import ast
import pathlib
import re

import numpy as np
import pytest
from stevedore import extension

from scheduler import context as sched_context
from scheduler import exception
from scheduler import objects
from scheduler.db import instances as db_instances
from scheduler.driver import filter_scheduler
from scheduler.driver import plugins
from scheduler.host_state import HostStateCache
from scheduler.model.request_state import RequestState

from .. import fakes
from . import probe_plugins

CTXT = sched_context.RequestContext(project_id='p1')
U = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e%02d' % i for i in range(12)]
DRIVER = pathlib.Path(filter_scheduler.__file__).parent


@pytest.fixture
def probes_registered(monkeypatch):
    """The probe distribution on ``sys.path``, and stevedore's list of
    entry points per namespace read afresh (it keeps one per process)."""
    monkeypatch.syspath_prepend(str(probe_plugins.DIST))
    monkeypatch.setattr(extension.ExtensionManager, 'ENTRY_POINT_CACHE',
                        {})


@pytest.fixture
def make_driver(conf, db, probes_registered):
    conf.set_override('enabled_filters',
                      ['ComputeFilter', 'ResourceFitFilter',
                       'NearInstanceFilter'], 'filter_scheduler')
    conf.set_override('enabled_weighers',
                      ['RAMWeigher', 'FavouredInstanceWeigher'],
                      'filter_scheduler')

    def make(refresh_interval=0.0):
        return filter_scheduler.FilterScheduler(
            conf, db, HostStateCache(db, refresh_interval=refresh_interval),
            plugins.load_filters(conf), plugins.load_weighers(conf),
            rng=np.random.default_rng(0))
    return make


@pytest.fixture
def driver(make_driver):
    return make_driver()


def _near(driver):
    return driver.filters[-1]


def _favoured(driver):
    return driver.weighers[-1]


def _report_instance(db, host, uuid):
    db_instances.save_instances(db, host, [objects.InstanceInfo(
        uuid=uuid, host=host, node=host)])


def _select(driver, consumers, **hints):
    spec = fakes.request_spec(num_instances=len(consumers),
                              scheduler_hints=hints)
    return [s[0].host for s in driver.select_destinations(
        CTXT, spec, instance_uuids=consumers)]


def test_probe_plugins_load_by_name(driver):
    assert isinstance(_near(driver), probe_plugins.NearInstanceFilter)
    assert isinstance(_favoured(driver),
                      probe_plugins.FavouredInstanceWeigher)


def test_a_filter_gets_its_stored_data_once_per_attempt(db, driver):
    for host in ('h1', 'h2', 'h3'):
        fakes.report(db, host)
    _report_instance(db, 'h2', U[10])
    # the spreading RAMWeigher alone would use all three hosts
    assert _select(driver, U[:3], near_instances=[U[10]]) == ['h2'] * 3
    # one read for the three instances of the request
    assert _near(driver).preloads == [[U[10]]]


def test_a_weigher_gets_its_stored_data(db, driver):
    for host in ('h1', 'h2', 'h3'):
        fakes.report(db, host)
    _report_instance(db, 'h3', U[10])
    assert _select(driver, U[:2], favoured_instances=[U[10]]) == ['h3', 'h3']
    assert _favoured(driver).preloads == [[U[10]]]


def test_stored_data_counts_claims_not_yet_reported(db, driver):
    for host in ('h1', 'h2', 'h3'):
        fakes.report(db, host)
    [first] = _select(driver, U[:1])
    assert _select(driver, U[1:3], near_instances=[U[0]]) == [first] * 2


def test_without_its_hint_a_plugin_keeps_nothing(db, driver):
    for host in ('h1', 'h2'):
        fakes.report(db, host)
    driver.cache.refresh(force=True)
    request = RequestState.from_spec(fakes.request_spec(
        scheduler_hints={'near_instances': [U[10]]}))
    # a hint naming instances that are nowhere: an empty set, kept
    with pytest.raises(exception.NoValidHost) as info:
        driver.plan(request, [U[0]])
    assert 'NearInstanceFilter' in info.value.reason
    assert request.preloaded == {'NearInstanceFilter': frozenset()}
    request = RequestState.from_spec(fakes.request_spec())
    assert len(driver.plan(request, [U[0]])) == 1
    assert request.preloaded == {}
    assert _near(driver).preloads == [[U[10]], None]
    assert _favoured(driver).preloads == [None, None]


def test_every_planning_attempt_reads_again(db, other_db, make_driver):
    # a view refreshed at most once an hour: the host h2 another worker
    # stored is missed, the NoValidHost is not trusted, the view
    # refreshed and the request planned again, with its stored data read
    # again
    driver = make_driver(refresh_interval=3600)
    fakes.report(db, 'h1')
    assert _select(driver, U[:1]) == ['h1']
    fakes.report(other_db, 'h2')
    _report_instance(other_db, 'h2', U[10])
    assert _select(driver, U[1:2], near_instances=[U[10]]) == ['h2']
    assert _near(driver).preloads == [None, [U[10]], [U[10]]]


def test_the_hooks_are_the_preload_phase(db, driver):
    fakes.report(db, 'h1')
    _near(driver).delay = _favoured(driver).delay = 0.03
    _select(driver, U[:1])
    phases = driver.recorder.last()
    assert phases['preload'] >= 0.06
    assert phases['filter'] < 0.03 and phases['weigh'] < 0.03


def _code_words(path):
    """Names and string constants of a module's code (its docstrings,
    which may quote a diagnosis, left out)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef,
                                       ast.FunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    words = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings):
            words |= set(re.findall(r'\w+', node.value))
    return words


def test_the_driver_names_no_plugin(probes_registered):
    names = set()
    for namespace in (plugins.FILTER_NAMESPACE, plugins.WEIGHER_NAMESPACE):
        names |= set(extension.ExtensionManager(namespace).names())
    assert {'SameHostFilter', 'NearInstanceFilter'} <= names
    hints = {'same_host', 'different_host', 'near_instances',
             'favoured_instances'}
    for path in sorted(DRIVER.glob('*.py')):
        assert not _code_words(path) & (names | hints), path.name
