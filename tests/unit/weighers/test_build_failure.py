"""BuildFailureWeigher: hosts with failed builds sink, by default behind
every healthy host whatever the other weighers say."""

import numpy as np

from scheduler.weighers import base
from scheduler.weighers import build_failure
from scheduler.weighers import resources
from tests.unit.filters import hosts


def _table(**failures):
    """Hosts h1..h3, ``failures`` the failed-build count per host."""
    providers = []
    for provider_id, host in enumerate(('h1', 'h2', 'h3'), 1):
        provider = hosts.provider(provider_id, host,
                                  memory_mb_used=1000 * provider_id)
        provider['failed_builds'] = failures.get(host, 0)
        providers.append(provider)
    return hosts.fakes.host_table(*providers)


def test_weight_is_minus_the_failure_count(conf):
    table = _table(h1=3, h3=1)
    weigher = build_failure.BuildFailureWeigher(conf)
    assert hosts.weights(weigher, table, hosts.request()) == {
        'h1': -3.0, 'h2': 0.0, 'h3': -1.0}


def test_default_multiplier_outweighs_free_ram(conf):
    # h1 has the most free RAM but one failed build
    table = _table(h1=1)
    weighers = [resources.RAMWeigher(conf),
                build_failure.BuildFailureWeigher(conf)]
    rows = np.arange(table.size)
    request = hosts.request()
    total = sum(w.multipliers(table, rows) *
                base.normalize(w.weigh_all(table, rows, request))
                for w in weighers)
    assert table.hosts[int(np.argmax(total))] == 'h2'


def test_a_new_report_resets_the_count(conf):
    table = _table(h2=2)
    weigher = build_failure.BuildFailureWeigher(conf)
    assert hosts.weights(weigher, table, hosts.request())['h2'] == -2.0
    provider = hosts.provider(2, 'h2')
    provider['failed_builds'] = 0
    table.apply([provider])
    assert hosts.weights(weigher, table, hosts.request())['h2'] == 0.0
