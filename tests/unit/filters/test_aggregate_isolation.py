"""Filters that let aggregate metadata reserve hosts: tenant isolation,
flavor (type) affinity, image-property isolation and aggregate extra specs.

Aggregates reach the table as ``HostTable.apply_aggregates`` receives them
from the database: ``{uuid, name, hosts, metadata, deleted}`` dicts.
"""

import pytest

from scheduler.filters import aggregate_isolation as isolation
from tests.unit.filters import hosts

HOST_NAMES = ['h1', 'h2', 'h3', 'h4']


def _table(*aggregates):
    """Hosts h1..h4; ``aggregates`` are (hosts, metadata) pairs."""
    table = hosts.table(*(dict(host=name) for name in HOST_NAMES))
    table.apply_aggregates([
        {'uuid': 'agg-%d' % index, 'name': 'agg%d' % index,
         'hosts': list(members), 'metadata': dict(metadata),
         'deleted': False}
        for index, (members, metadata) in enumerate(aggregates)])
    return table


def _request(project_id=None, flavor_name=None, **kwargs):
    request = hosts.request(**kwargs)
    request.spec.project_id = project_id
    request.spec.flavor.name = flavor_name
    return request


# -- AggregateMultiTenancyIsolation -------------------------------------

TENANT_TABLE = _table(
    (['h1', 'h2'], {'filter_tenant_id': 'p1, p2'}),
    (['h2'], {'filter_tenant_id2': 'p3'}),
    (['h3'], {'other': 'p9'}),
)

TENANT_CASES = [
    ('listed project', 'p1', ['h1', 'h2', 'h3', 'h4']),
    ('spaces around commas are ignored', 'p2', ['h1', 'h2', 'h3', 'h4']),
    ('second key of another aggregate adds to the union', 'p3',
     ['h2', 'h3', 'h4']),
    ('other project stays off reserved hosts', 'p9', ['h3', 'h4']),
    ('no project stays off reserved hosts', None, ['h3', 'h4']),
]


@pytest.mark.parametrize('project, expected',
                         [c[1:] for c in TENANT_CASES],
                         ids=[c[0] for c in TENANT_CASES])
def test_multi_tenancy_isolation(conf, project, expected):
    plugin = isolation.AggregateMultiTenancyIsolation(conf)
    assert plugin.vectorized
    assert hosts.passing(plugin, TENANT_TABLE,
                         _request(project_id=project)) == expected


def test_multi_tenancy_isolation_follows_aggregate_changes(conf):
    table = _table((['h1'], {'filter_tenant_id': 'p1'}))
    plugin = isolation.AggregateMultiTenancyIsolation(conf)
    request = _request(project_id='p2')
    assert 'h1' not in hosts.passing(plugin, table, request)
    table.apply_aggregates([{'uuid': 'agg-0', 'hosts': [], 'metadata': {},
                             'deleted': True}])
    assert hosts.passing(plugin, table, request) == HOST_NAMES


# -- AggregateTypeAffinityFilter ----------------------------------------

TYPE_TABLE = _table(
    (['h1'], {'instance_type': 'm1.small,m1.tiny'}),
    (['h1', 'h2'], {'instance_type': 'm1.large'}),
    (['h3'], {'ssd': 'true'}),
)

TYPE_CASES = [
    ('listed flavor', 'm1.tiny', ['h1', 'h3', 'h4']),
    ('union over the host aggregates', 'm1.large', ['h1', 'h2', 'h3', 'h4']),
    ('unlisted flavor', 'm1.xlarge', ['h3', 'h4']),
    ('flavor without a name', None, ['h3', 'h4']),
]


@pytest.mark.parametrize('flavor, expected', [c[1:] for c in TYPE_CASES],
                         ids=[c[0] for c in TYPE_CASES])
def test_type_affinity(conf, flavor, expected):
    plugin = isolation.AggregateTypeAffinityFilter(conf)
    assert hosts.passing(plugin, TYPE_TABLE,
                         _request(flavor_name=flavor)) == expected


# -- AggregateImagePropertiesIsolation ----------------------------------

IMAGE_TABLE = _table(
    (['h1'], {'hw_architecture': 'x86_64', 'os.os_distro': 'ubuntu'}),
    (['h2'], {'hw_architecture': 'aarch64,armv7l'}),
    (['h3'], {'os.hw_architecture': 'aarch64', 'hw_vm_mode': 'hvm'}),
)

IMAGE_CASES = [
    # (id, namespace, image properties, expected)
    ('image without properties', None, {}, HOST_NAMES),
    ('matching value', None, {'hw_architecture': 'x86_64'},
     ['h1', 'h3', 'h4']),
    ('one of a comma-separated list', None, {'hw_architecture': 'armv7l'},
     ['h2', 'h3', 'h4']),
    ('property no aggregate sets', None, {'img_hv_type': 'kvm'}, HOST_NAMES),
    ('every property must match', None,
     {'hw_architecture': 'x86_64', 'hw_vm_mode': 'xen'}, ['h1', 'h4']),
    ('without namespace, prefixed keys are other properties', None,
     {'os_distro': 'rhel'}, HOST_NAMES),
    ('namespace: only prefixed keys count', 'os',
     {'hw_architecture': 'x86_64'}, ['h1', 'h2', 'h4']),
    ('namespace: prefix stripped before comparing', 'os',
     {'os_distro': 'rhel'}, ['h2', 'h3', 'h4']),
]


@pytest.mark.parametrize('namespace, properties, expected',
                         [c[1:] for c in IMAGE_CASES],
                         ids=[c[0] for c in IMAGE_CASES])
def test_image_properties_isolation(conf, namespace, properties, expected):
    conf.set_override('aggregate_image_properties_isolation_namespace',
                      namespace, 'filter_scheduler')
    plugin = isolation.AggregateImagePropertiesIsolation(conf)
    request = hosts.request(image={'properties': properties})
    assert hosts.passing(plugin, IMAGE_TABLE, request) == expected


def test_image_properties_isolation_custom_separator(conf):
    conf.set_override('aggregate_image_properties_isolation_namespace',
                      'os', 'filter_scheduler')
    conf.set_override('aggregate_image_properties_isolation_separator',
                      '|', 'filter_scheduler')
    table = _table((['h1'], {'os|hw_architecture': 'x86_64'}),
                   (['h2'], {'os.hw_architecture': 'x86_64'}))
    plugin = isolation.AggregateImagePropertiesIsolation(conf)
    request = hosts.request(image={'properties': {
        'hw_architecture': 'aarch64'}})
    assert hosts.passing(plugin, table, request) == ['h2', 'h3', 'h4']


def test_image_properties_isolation_without_image(conf):
    plugin = isolation.AggregateImagePropertiesIsolation(conf)
    assert hosts.passing(plugin, IMAGE_TABLE, hosts.request()) == HOST_NAMES


def test_image_properties_isolation_unions_the_host_aggregates(conf):
    # a host in an x86_64 and an aarch64 aggregate runs both, as the
    # module docstring says (the image's value among *theirs*)
    table = _table((['h1'], {'hw_architecture': 'x86_64'}),
                   (['h1', 'h2'], {'hw_architecture': 'aarch64'}))
    plugin = isolation.AggregateImagePropertiesIsolation(conf)
    request = hosts.request(image={'properties': {
        'hw_architecture': 'x86_64'}})
    assert hosts.passing(plugin, table, request) == ['h1', 'h3', 'h4']


# -- AggregateInstanceExtraSpecsFilter ----------------------------------

SPECS_TABLE = _table(
    (['h1'], {'ssd': 'true', 'cpus': '16', 'tier': 'gold'}),
    (['h2'], {'ssd': 'false', 'cpus': '8'}),
    (['h1', 'h2'], {'tier': 'silver'}),
    (['h3'], {'tier': 'bronze'}),
)

SPECS_CASES = [
    ('no extra specs', {}, HOST_NAMES),
    ('scoped key', {'aggregate_instance_extra_specs:ssd': 'true'}, ['h1']),
    ('unscoped key', {'ssd': 'false'}, ['h2']),
    ('other namespaces are ignored',
     {'hw:cpu_policy': 'dedicated', 'capabilities:ssd': 'true',
      'trait:CUSTOM_X': 'required'}, HOST_NAMES),
    ('numeric operator', {'aggregate_instance_extra_specs:cpus': '>= 10'},
     ['h1']),
    ('"=" means at least', {'cpus': '= 8'}, ['h1', 'h2']),
    ('<or> operator', {'tier': '<or> bronze <or> gold'}, ['h1', 'h3']),
    ('any value of the host aggregates matches', {'tier': 'silver'},
     ['h1', 'h2']),
    ('string operator', {'tier': 's!= bronze'}, ['h1', 'h2']),
    ('every requirement must hold', {'ssd': 'true', 'tier': 'silver'},
     ['h1']),
    ('host without the key fails', {'tier': '<in> o'}, ['h1', 'h3']),
    ('host in no aggregate fails a requirement', {'ssd': 's!= x'},
     ['h1', 'h2']),
    # nova checks a scoped and an unscoped spec on one key separately
    ('scoped and unscoped spec on one key: both hold',
     {'aggregate_instance_extra_specs:cpus': '>= 10', 'cpus': '<= 12'}, []),
    ('scoped and unscoped spec on one key: both hold, some host',
     {'aggregate_instance_extra_specs:cpus': '>= 10', 'cpus': '<= 16'},
     ['h1']),
]


@pytest.mark.parametrize('extra_specs, expected',
                         [c[1:] for c in SPECS_CASES],
                         ids=[c[0] for c in SPECS_CASES])
def test_instance_extra_specs(conf, extra_specs, expected):
    plugin = isolation.AggregateInstanceExtraSpecsFilter(conf)
    request = hosts.request(extra_specs=extra_specs)
    assert hosts.passing(plugin, SPECS_TABLE, request) == expected


@pytest.mark.parametrize('plugin_class, request_kwargs, text', [
    (isolation.AggregateMultiTenancyIsolation, {'project_id': 'p9'},
     'other projects'),
    (isolation.AggregateTypeAffinityFilter, {'flavor_name': 'm1.xlarge'},
     'other flavors'),
])
def test_explain_names_the_reservation(conf, plugin_class, request_kwargs,
                                       text):
    plugin = plugin_class(conf)
    assert text in plugin.explain(TENANT_TABLE, _request(**request_kwargs),
                                  [0])


def test_instance_extra_specs_follow_aggregate_and_host_changes(conf):
    """What the filter derives from the aggregates is kept between
    requests; a change of the aggregates or a new host is seen by the
    next request."""
    plugin = isolation.AggregateInstanceExtraSpecsFilter(conf)
    table = _table((['h1', 'h5'], {'ssd': 'true'}))
    request = hosts.request(extra_specs={'ssd': 'true'})
    assert hosts.passing(plugin, table, request) == ['h1']
    assert hosts.passing(plugin, table, request) == ['h1']
    table.apply_aggregates([{'uuid': 'agg-0', 'name': 'agg0',
                             'hosts': ['h2', 'h5'],
                             'metadata': {'ssd': 'true'}, 'deleted': False}])
    assert hosts.passing(plugin, table, request) == ['h2']
    table.apply([hosts.provider(5, host='h5')])
    assert hosts.passing(plugin, table, request) == ['h2', 'h5']


# -- AggregateTenantAffinityFilter --------------------------------------

AFFINITY_TABLE = _table(
    (['h1', 'h2'], {'filter_tenant_id': 'p1'}),
    (['h3'], {'filter_tenant_id_2': 'p1'}),
    (['h4'], {'filter_tenant_id': 'p2'}),
)


@pytest.mark.parametrize('project, required, expected', [
    ('p1', False, ['h1', 'h2', 'h3']),
    ('p2', False, ['h4']),
    ('p9', False, ['h1', 'h2', 'h3', 'h4']),
    ('p9', True, []),
])
def test_tenant_affinity(conf, project, required, expected):
    conf.set_override('aggregate_required_for_tenants', required,
                      'filter_scheduler')
    plugin = isolation.AggregateTenantAffinityFilter(conf)
    assert hosts.passing(plugin, AFFINITY_TABLE,
                         _request(project_id=project)) == expected
