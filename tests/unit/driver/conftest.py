"""A FilterScheduler on a SQLite database, with the default pipeline
pinned (so adding a plugin to the defaults does not change these tests)
and a seeded random generator."""

import numpy as np
import pytest

from scheduler.driver import plugins
from scheduler.driver import filter_scheduler
from scheduler.host_state import HostStateCache


@pytest.fixture
def make_driver(conf, db):
    conf.set_override('enabled_filters',
                      ['ComputeFilter', 'AvailabilityZoneFilter',
                       'ResourceFitFilter'], 'filter_scheduler')
    conf.set_override('enabled_weighers', ['RAMWeigher', 'CPUWeigher'],
                      'filter_scheduler')

    def make(refresh_interval=0.0, seed=0, database=None):
        database = database or db
        cache = HostStateCache(database, refresh_interval=refresh_interval)
        return filter_scheduler.FilterScheduler(
            conf, database, cache, plugins.load_filters(conf),
            plugins.load_weighers(conf), rng=np.random.default_rng(seed))
    return make


@pytest.fixture
def driver(make_driver):
    return make_driver()
