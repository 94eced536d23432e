"""PciPassthroughFilter: flavor aliases against host device pools."""

import json

import pytest

from scheduler import exception
from scheduler.driver import plugins
from scheduler.filters import pci_passthrough
from tests.unit.filters import hosts

ALIASES = [
    json.dumps({'name': 'gpu', 'vendor_id': '10DE', 'product_id': '1db4'}),
    json.dumps({'name': 'vf', 'vendor_id': '8086', 'product_id': '154c',
                'device_type': 'type-VF', 'physical_network': 'physnet1'}),
    # two entries, one name: either device satisfies "any-nic"
    json.dumps({'name': 'any-nic', 'vendor_id': '8086',
                'product_id': '154c'}),
    json.dumps({'name': 'any-nic', 'vendor_id': '15b3',
                'product_id': '1018'}),
]


def _pool(vendor, product, count, **tags):
    return dict(vendor_id=vendor, product_id=product, count=count, **tags)


HOSTS = hosts.table(
    dict(host='gpu2', pci_device_pools=[_pool('10de', '1db4', 2)]),
    dict(host='gpu1-vf4', pci_device_pools=[
        _pool('10de', '1db4', 1),
        _pool('8086', '154c', 4, dev_type='type-VF',
              physical_network='physnet1')]),
    dict(host='vf-other-net', pci_device_pools=[
        _pool('8086', '154c', 8, dev_type='type-VF',
              physical_network='physnet2')]),
    dict(host='mlx', pci_device_pools=[_pool('15b3', '1018', 3)]),
    dict(host='none'),
)
ALL = ['gpu2', 'gpu1-vf4', 'vf-other-net', 'mlx', 'none']

CASES = [
    ('no PCI request', {}, ALL),
    ('one GPU', {'pci_passthrough:alias': 'gpu:1'}, ['gpu2', 'gpu1-vf4']),
    ('count defaults to 1', {'pci_passthrough:alias': 'gpu'},
     ['gpu2', 'gpu1-vf4']),
    ('two GPUs', {'pci_passthrough:alias': 'gpu:2'}, ['gpu2']),
    ('too many', {'pci_passthrough:alias': 'gpu:3'}, []),
    ('tags must match', {'pci_passthrough:alias': 'vf:2'}, ['gpu1-vf4']),
    ('several aliases at once',
     {'pci_passthrough:alias': 'gpu:1, vf:4'}, ['gpu1-vf4']),
    ('same alias twice adds up',
     {'pci_passthrough:alias': 'gpu:1,gpu:1'}, ['gpu2']),
    ('alias with alternatives', {'pci_passthrough:alias': 'any-nic:3'},
     ['gpu1-vf4', 'vf-other-net', 'mlx']),
    ('constrained request served first',
     {'pci_passthrough:alias': 'any-nic:4, vf:4'}, []),
]


@pytest.fixture
def plugin(conf):
    conf.set_override('alias', ALIASES, 'pci')
    return pci_passthrough.PciPassthroughFilter(conf)


@pytest.mark.parametrize('extra_specs, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_filter(plugin, extra_specs, expected):
    assert hosts.passing(plugin, HOSTS, hosts.request(extra_specs)) == \
        expected


def test_greedy_takes_the_constrained_request_first(plugin):
    table = hosts.table(dict(host='h', pci_device_pools=[
        _pool('8086', '154c', 2, dev_type='type-VF',
              physical_network='physnet1'),
        _pool('15b3', '1018', 2)]))
    # any-nic listed first could take the VFs that vf needs
    request = hosts.request({'pci_passthrough:alias': 'any-nic:2, vf:2'})
    assert hosts.passing(plugin, table, request) == ['h']


@pytest.mark.parametrize('spec, reason', [
    ('nope:1', "alias 'nope' is not defined"),
    ('gpu:0', 'positive integer'),
    ('gpu:x', 'positive integer'),
])
def test_bad_request_names_the_extra_spec(plugin, spec, reason):
    request = hosts.request({'pci_passthrough:alias': spec})
    with pytest.raises(exception.InvalidField,
                       match='pci_passthrough:alias') as caught:
        hosts.passing(plugin, HOSTS, request)
    assert reason in str(caught.value)


@pytest.mark.parametrize('alias', [
    'not json', '["gpu"]', '{"vendor_id": "10de"}',
    '{"name": "x", "device_type": "type-GPU"}',
    '{"name": "x", "numa_policy": "strict"}',
    '{"name": "x", "device_type": "type-VDPA"}',
    '{"name": "x", "tags": ["a"]}',
    # as nova: entries of one name agree on device type and NUMA policy
    ['{"name": "x", "vendor_id": "1", "device_type": "type-VF"}',
     '{"name": "x", "vendor_id": "2", "device_type": "type-PF"}'],
    ['{"name": "x", "vendor_id": "1", "numa_policy": "required"}',
     '{"name": "x", "vendor_id": "2"}'],
])
def test_bad_alias_fails_at_start_up(conf, alias):
    conf.set_override('alias', alias if isinstance(alias, list)
                      else [alias], 'pci')
    conf.set_override('enabled_filters', ['PciPassthroughFilter'],
                      'filter_scheduler')
    with pytest.raises(exception.PluginLoadError, match=r'\[pci\] alias'):
        plugins.load_filters(conf)


# nova hands PFs, vDPA and remote-managed devices only to requests that ask
# for them by name
RESERVED_ALIASES = ALIASES + [
    json.dumps({'name': 'nic', 'vendor_id': '8086', 'product_id': '1572'}),
    json.dumps({'name': 'pf', 'vendor_id': '8086', 'product_id': '1572',
                'device_type': 'type-PF'}),
    json.dumps({'name': 'mlx-any', 'vendor_id': '15b3',
                'product_id': '101e'}),
]
RESERVED_HOSTS = hosts.table(
    dict(host='pf', pci_device_pools=[
        _pool('8086', '1572', 2, dev_type='type-PF')]),
    dict(host='pci', pci_device_pools=[
        _pool('8086', '1572', 2, dev_type='type-PCI')]),
    dict(host='vdpa', pci_device_pools=[
        _pool('15b3', '101e', 2, dev_type='type-VDPA')]),
    dict(host='smartnic', pci_device_pools=[
        _pool('15b3', '101e', 2, dev_type='type-VF',
              remote_managed='true')]),
)
RESERVED_CASES = [
    ('vendor/product alone never gets a PF', 'nic:1', ['pci']),
    ('asking for type-PF gets it', 'pf:1', ['pf']),
    ('neither vDPA nor remote-managed by vendor alone', 'mlx-any:1', []),
]


@pytest.mark.parametrize('alias, expected',
                         [c[1:] for c in RESERVED_CASES],
                         ids=[c[0] for c in RESERVED_CASES])
def test_devices_given_only_when_asked_for(conf, alias, expected):
    conf.set_override('alias', RESERVED_ALIASES, 'pci')
    plugin = pci_passthrough.PciPassthroughFilter(conf)
    request = hosts.request({'pci_passthrough:alias': alias})
    assert hosts.passing(plugin, RESERVED_HOSTS, request) == expected


@pytest.mark.parametrize('extra_specs, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_precheck_changes_nothing(plugin, extra_specs, expected):
    request = hosts.request(extra_specs)
    # host_passes alone, on every host, decides the same
    assert [HOSTS.hosts[row] for row in range(HOSTS.size)
            if plugin.host_passes(HOSTS.view(row), request)] == expected


def test_host_re_reporting_its_pools_is_seen(plugin):
    table = hosts.table(dict(host='h', pci_device_pools=[
        _pool('10de', '1db4', 2)]))
    request = hosts.request({'pci_passthrough:alias': 'gpu:2'})
    assert hosts.passing(plugin, table, request) == ['h']
    table.apply([hosts.provider(1, host='h', pci_device_pools=[
        _pool('10de', '1db4', 1)])])
    assert hosts.passing(plugin, table, request) == []
    table.apply([hosts.provider(1, host='h', pci_device_pools=[
        _pool('10de', '1db4', 3)])])
    assert hosts.passing(plugin, table, request) == ['h']
