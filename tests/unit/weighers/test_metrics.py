"""MetricsWeigher: weighted sums of host metrics, and missing metrics."""

import json

import pytest

from scheduler import exception
from scheduler.driver import plugins
from scheduler.weighers import metrics
from tests.unit.filters import hosts


def _metrics(**values):
    return json.dumps([{'name': name.replace('_', '.'), 'value': value,
                        'timestamp': 0, 'source': 'test'}
                       for name, value in values.items()])


HOSTS = hosts.table(
    dict(host='h1', metrics=_metrics(cpu_percent=10.0, io_wait=1.0)),
    dict(host='h2', metrics=_metrics(cpu_percent=50.0, io_wait=4.0)),
    dict(host='cpu-only', metrics=_metrics(cpu_percent=20.0)),
)

CASES = [
    ('one metric', ['cpu.percent=1.0'], True,
     {'h1': 10.0, 'h2': 50.0, 'cpu-only': 20.0}),
    ('weighted sum', ['cpu.percent=-1.0', 'io.wait=2.5'], False,
     {'h1': -7.5, 'h2': -40.0, 'cpu-only': -10000.0}),
    ('zero ratio ignores a missing metric', ['cpu.percent=1', 'io.wait=0'],
     False, {'h1': 10.0, 'h2': 50.0, 'cpu-only': 20.0}),
    ('no setting', [], True, {'h1': 0.0, 'h2': 0.0, 'cpu-only': 0.0}),
]


@pytest.mark.parametrize('setting, required, expected',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_weights(conf, setting, required, expected):
    conf.set_override('weight_setting', setting, 'metrics')
    conf.set_override('required', required, 'metrics')
    weigher = metrics.MetricsWeigher(conf)
    assert hosts.weights(weigher, HOSTS, hosts.request()) == expected


def test_missing_required_metric_is_no_valid_host(conf):
    conf.set_override('weight_setting', ['io.wait=1'], 'metrics')
    weigher = metrics.MetricsWeigher(conf)
    with pytest.raises(exception.NoValidHost,
                       match='cpu-only does not report metric io.wait'):
        hosts.weights(weigher, HOSTS, hosts.request())


def test_bad_setting_fails_at_start_up(conf):
    conf.set_override('weight_setting', ['cpu.percent:1'], 'metrics')
    conf.set_override('enabled_weighers', ['MetricsWeigher'],
                      'filter_scheduler')
    with pytest.raises(exception.PluginLoadError, match='weight_setting'):
        plugins.load_weighers(conf)


def test_weights_follow_a_new_report(conf):
    """The metric columns are kept as hosts report: the next request
    weighs the new values."""
    conf.set_override('weight_setting', ['cpu.percent=1.0'], 'metrics')
    weigher = metrics.MetricsWeigher(conf)
    table = hosts.table(dict(host='h1', metrics=_metrics(cpu_percent=10.0)),
                        dict(host='h2', metrics=_metrics(cpu_percent=5.0)))
    assert hosts.weights(weigher, table, hosts.request()) == {
        'h1': 10.0, 'h2': 5.0}
    table.apply([hosts.provider(2, host='h2',
                                metrics=_metrics(cpu_percent=70.0))])
    assert hosts.weights(weigher, table, hosts.request()) == {
        'h1': 10.0, 'h2': 70.0}
