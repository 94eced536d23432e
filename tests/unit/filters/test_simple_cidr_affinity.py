"""SimpleCIDRAffinityFilter: host_ip inside build_near_host_ip/cidr."""

import pytest

from scheduler import exception
from scheduler.filters import simple_cidr_affinity
from tests.unit.filters import hosts

HOSTS = hosts.table(
    dict(host='a', host_ip='10.0.1.5'),
    dict(host='b', host_ip='10.0.1.200'),
    dict(host='c', host_ip='10.0.2.7'),
    dict(host='v6', host_ip='2001:db8::5'),
    dict(host='no-ip'),
)
ALL = ['a', 'b', 'c', 'v6', 'no-ip']

CASES = [
    ('no hint', {}, ALL),
    ('cidr alone does nothing', {'cidr': '/16'}, ALL),
    ('default /24', {'build_near_host_ip': '10.0.1.1'}, ['a', 'b']),
    ('/16', {'build_near_host_ip': '10.0.1.1', 'cidr': '/16'},
     ['a', 'b', 'c']),
    ('prefix without slash', {'build_near_host_ip': '10.0.1.1',
                              'cidr': '25'}, ['a']),
    ('/32', {'build_near_host_ip': '10.0.2.7', 'cidr': '/32'}, ['c']),
    ('IPv6', {'build_near_host_ip': '2001:db8::1', 'cidr': '/64'}, ['v6']),
]


@pytest.mark.parametrize('hints, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_filter(conf, hints, expected):
    plugin = simple_cidr_affinity.SimpleCIDRAffinityFilter(conf)
    assert hosts.passing(plugin, HOSTS, hosts.request(hints=hints)) == \
        expected


@pytest.mark.parametrize('hints, field', [
    ({'build_near_host_ip': '10.0.1'}, 'scheduler_hints.build_near_host_ip'),
    ({'build_near_host_ip': '10.0.1.1', 'cidr': '/33'},
     'scheduler_hints.cidr'),
    ({'build_near_host_ip': '10.0.1.1', 'cidr': '/x'},
     'scheduler_hints.cidr'),
])
def test_bad_hint_names_it(conf, hints, field):
    plugin = simple_cidr_affinity.SimpleCIDRAffinityFilter(conf)
    with pytest.raises(exception.InvalidField, match=field):
        hosts.passing(plugin, HOSTS, hosts.request(hints=hints))
