"""Plugins that only the tests register, with a preload hook each.

``probe_dist/`` beside this module is a distribution's metadata whose
entry points name them in ``scheduler.filters`` and ``scheduler.weighers``;
with that folder on ``sys.path`` they load by name from
``[filter_scheduler] enabled_filters`` / ``enabled_weighers`` like any
plugin, so the driver runs them without knowing them.
"""

import pathlib
import time

import numpy as np

from scheduler.filters import base as filters_base
from scheduler.weighers import base as weighers_base

DIST = pathlib.Path(__file__).parent / 'probe_dist'


def _instance_hosts(plugin, hint, request, store):
    uuids = request.hints.get(hint)
    plugin.preloads.append(uuids)
    time.sleep(plugin.delay)    # a slow preload, as the probe asks
    if uuids is None:
        return None
    return store.instance_hosts(uuids)


def _rows_on(table, hosts, rows=None):
    on = np.zeros(table.size, dtype=bool)
    for host in hosts:
        on[table.rows_of_host(host)] = True
    return on if rows is None else on[np.asarray(rows, dtype=np.intp)]


class NearInstanceFilter(filters_base.BaseFilter):
    """Hint ``near_instances`` (instance UUIDs): only their hosts."""

    delay = 0.0  # seconds its preload hook takes

    def __init__(self, conf):
        super().__init__(conf)
        self.preloads = []  # the hint each preload call saw

    def preload(self, request, store):
        return _instance_hosts(self, 'near_instances', request, store)

    def applies_to(self, request):
        return self.preloaded(request) is not None

    def filter_all(self, table, request):
        hosts = self.preloaded(request)
        if hosts is None:   # no hint: every host passes
            return np.ones(table.size, dtype=bool)
        return _rows_on(table, hosts)


class FavouredInstanceWeigher(weighers_base.BaseWeigher):
    """Hint ``favoured_instances`` (instance UUIDs): their hosts weigh
    1, others 0; a multiplier of 10 outweighs the resource weighers."""

    delay = 0.0

    def __init__(self, conf):
        super().__init__(conf)
        self.multiplier = 10.0
        self.preloads = []

    def preload(self, request, store):
        return _instance_hosts(self, 'favoured_instances', request, store)

    def weigh_all(self, table, rows, request):
        hosts = self.preloaded(request)
        if hosts is None:
            return np.zeros(len(rows))
        return _rows_on(table, hosts, rows).astype(np.float64)
