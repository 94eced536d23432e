"""TraitsFilter and AggregateRequiredTraitsIsolation: nova's
``trait:<NAME>=required|forbidden`` of the flavor and the image, against
the hosts' reported traits and their aggregates' metadata."""

import pytest

from scheduler import exception
from scheduler.filters import traits
from tests.unit.filters import hosts

HOSTS = hosts.table(
    dict(host='avx', traits=['HW_CPU_X86_AVX2']),
    dict(host='sgx', traits=['HW_CPU_X86_SGX', 'HW_CPU_X86_AVX2']),
    dict(host='bare'),
)

CASES = [
    ('nothing asked', {}, None, ['avx', 'sgx', 'bare']),
    ('flavor requires', {'trait:HW_CPU_X86_AVX2': 'required'}, None,
     ['avx', 'sgx']),
    ('flavor forbids', {'trait:HW_CPU_X86_SGX': 'forbidden'}, None,
     ['avx', 'bare']),
    ('image requires', {}, {'trait:HW_CPU_X86_SGX': 'required'}, ['sgx']),
    ('flavor wins over image', {'trait:HW_CPU_X86_SGX': 'forbidden'},
     {'trait:HW_CPU_X86_SGX': 'required'}, ['avx', 'bare']),
    ("nova's image object lists them", {},
     {'traits_required': '["HW_CPU_X86_SGX"]'}, ['sgx']),
    ('other values are not traits', {'trait:HW_CPU_X86_SGX': 'maybe'},
     None, ['avx', 'sgx', 'bare']),
]


@pytest.mark.parametrize('extra_specs, properties, expected',
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_traits_filter(conf, extra_specs, properties, expected):
    image = None if properties is None else {'id': 'i',
                                             'properties': properties}
    request = hosts.request(extra_specs=extra_specs, image=image)
    assert hosts.passing(traits.TraitsFilter(conf), HOSTS, request) == \
        expected


def test_a_malformed_trait_is_refused_naming_its_key(conf):
    request = hosts.request(extra_specs={'trait:not a trait': 'required'})
    with pytest.raises(exception.InvalidField) as info:
        traits.TraitsFilter(conf).check_request(request)
    assert info.value.kwargs['field'] == \
        'flavor.extra_specs.trait:not a trait'


def test_a_malformed_image_list_is_refused(conf):
    request = hosts.request(image={'id': 'i', 'properties': {
        'traits_required': '{"not": "a list"}'}})
    with pytest.raises(exception.InvalidField) as info:
        traits.TraitsFilter(conf).check_request(request)
    assert info.value.kwargs['field'] == 'image.properties.traits_required'


def _isolated():
    table = hosts.table(dict(host='h1'), dict(host='h2'), dict(host='h3'))
    table.apply_aggregates([
        {'uuid': 'a1', 'name': 'gpu', 'hosts': ['h1'], 'deleted': False,
         'metadata': {'trait:HW_GPU_API_DXVA': 'required'}},
        {'uuid': 'a2', 'name': 'sgx', 'hosts': ['h2'], 'deleted': False,
         'metadata': {'trait:HW_CPU_X86_SGX': 'required',
                      'trait:HW_CPU_X86_AVX2': 'required'}},
    ])
    return table


@pytest.mark.parametrize('extra_specs, expected', [
    ({}, ['h3']),
    ({'trait:HW_GPU_API_DXVA': 'required'}, ['h1', 'h3']),
    # every trait the aggregate keeps its hosts for
    ({'trait:HW_CPU_X86_SGX': 'required'}, ['h3']),
    ({'trait:HW_CPU_X86_SGX': 'required',
      'trait:HW_CPU_X86_AVX2': 'required'}, ['h2', 'h3']),
])
def test_aggregates_kept_for_their_traits(conf, extra_specs, expected):
    request = hosts.request(extra_specs=extra_specs)
    assert hosts.passing(traits.AggregateRequiredTraitsIsolation(conf),
                         _isolated(), request) == expected
