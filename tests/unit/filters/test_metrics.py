"""MetricsFilter: hosts must report every metric of weight_setting."""

import json

import pytest

from scheduler import exception
from scheduler.driver import plugins
from scheduler.filters import metrics
from tests.unit.filters import hosts


def _metrics(**values):
    return json.dumps([{'name': name, 'value': value, 'timestamp': 0,
                        'source': 'test'} for name, value in values.items()])


HOSTS = hosts.table(
    dict(host='both', metrics=_metrics(**{'cpu.percent': 10.0,
                                          'io.wait': 2})),
    dict(host='cpu-only', metrics=_metrics(**{'cpu.percent': 50.0})),
    dict(host='none'),
    dict(host='garbled', metrics='not json'),
    dict(host='not-numeric', metrics=_metrics(**{'cpu.percent': 'high',
                                                 'io.wait': 1})),
)

CASES = [
    ('no setting: every host', [],
     ['both', 'cpu-only', 'none', 'garbled', 'not-numeric']),
    ('one metric', ['cpu.percent=1.0'], ['both', 'cpu-only']),
    ('two metrics', ['cpu.percent=1.0', 'io.wait=-2'], ['both']),
]


@pytest.mark.parametrize('setting, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_filter(conf, setting, expected):
    conf.set_override('weight_setting', setting, 'metrics')
    plugin = metrics.MetricsFilter(conf)
    assert hosts.passing(plugin, HOSTS, hosts.request()) == expected


def test_explain_names_missing_metrics(conf):
    conf.set_override('weight_setting', ['cpu.percent=1', 'io.wait=1'],
                      'metrics')
    plugin = metrics.MetricsFilter(conf)
    assert plugin.explain(HOSTS, hosts.request(), [1, 2]) == \
        'missing metrics: cpu.percent, io.wait'


@pytest.mark.parametrize('setting', [['cpu.percent'], ['cpu.percent=x'],
                                     ['=1.0']])
def test_bad_setting_fails_at_start_up(conf, setting):
    conf.set_override('weight_setting', setting, 'metrics')
    conf.set_override('enabled_filters', ['MetricsFilter'],
                      'filter_scheduler')
    with pytest.raises(exception.PluginLoadError, match='weight_setting'):
        plugins.load_filters(conf)
