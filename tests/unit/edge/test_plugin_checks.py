"""What an enabled plugin owns (a hint, an extra spec, an image property)
is refused at the RPC edge, before planning: the driver never sees a
request a filter cannot read, and the caller learns which field."""

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.service import composition

from .. import fakes
from . import edge

UUID = '6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e50'
FILTERS = ['ResourceFitFilter', 'NUMATopologyFilter', 'PciPassthroughFilter',
           'JsonFilter', 'SimpleCIDRAffinityFilter', 'ImagePropertiesFilter']


@pytest.fixture
def manager(conf, db):
    conf.set_override('enabled_filters', FILTERS, 'filter_scheduler')
    manager = composition.build_manager(conf, db)
    fakes.report(db, 'h1', vcpus=8, memory_mb=8192)
    manager.driver_calls = []
    select = manager.driver.select_destinations

    def recorded(*args, **kwargs):
        manager.driver_calls.append(args)
        return select(*args, **kwargs)
    manager.driver.select_destinations = recorded
    yield manager
    manager.stop()


def _spec(extra_specs=None, hints=None, image_properties=None):
    spec = fakes.request_spec(vcpus=1, memory_mb=512,
                              scheduler_hints=hints or {})
    spec.flavor.extra_specs = extra_specs or {}
    if image_properties:
        spec.image = objects.ImageMeta(properties=image_properties)
    return spec


@pytest.mark.parametrize('spec, field', [
    (_spec(extra_specs={'hw:numa_nodes': 'two'}),
     'flavor.extra_specs.hw:numa_nodes'),
    (_spec(extra_specs={'pci_passthrough:alias': 'no-such-alias:1'}),
     'flavor.extra_specs.pci_passthrough:alias'),
    (_spec(hints={'query': ['[">=", "$free_ram_mb"']}),
     'scheduler_hints.query'),
    (_spec(hints={'build_near_host_ip': ['10.0.0.1'], 'cidr': ['/99']}),
     'scheduler_hints.cidr'),
    (_spec(image_properties={'img_hv_requested_version': 'newest'}),
     'image.properties.img_hv_requested_version'),
], ids=['numa', 'pci-alias', 'json-query', 'cidr', 'image-version'])
def test_a_plugin_refuses_what_it_owns_before_planning(manager, spec,
                                                        field):
    with pytest.raises(exception.InvalidField) as info:
        edge.send(manager, 'select_destinations', cast=False,
                  spec_obj=spec, instance_uuids=[UUID])
    assert field in info.value.kwargs['field']
    assert manager.driver_calls == []


def test_a_request_the_plugins_read_is_planned(manager):
    spec = _spec(hints={'query': ['[">=", "$free_ram_mb", 256]']})
    [[selection]] = edge.send(manager, 'select_destinations', cast=False,
                              spec_obj=spec, instance_uuids=[UUID])
    assert selection.host == 'h1' and len(manager.driver_calls) == 1
    assert [type(p).__name__ for p in manager.request_checks.plugins] == [
        'NUMATopologyFilter', 'PciPassthroughFilter', 'JsonFilter',
        'SimpleCIDRAffinityFilter', 'ImagePropertiesFilter']


def test_without_plugins_that_check_the_call_costs_nothing(conf, db):
    conf.set_override('enabled_filters', ['ResourceFitFilter'],
                      'filter_scheduler')
    manager = composition.build_manager(conf, db)
    try:
        assert manager.request_checks.plugins == []
        manager.request_checks(None)    # returns before reading the spec
    finally:
        manager.stop()
