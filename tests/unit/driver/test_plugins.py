"""Plugin pipelines load from config by entry point name and fail fast,
naming the culprit, on an unknown name, a duplicate or a zero multiplier.
Their preload hooks read through ``StoredData`` and their answers are kept
by plugin name (the driver side: ``test_preload_hook``)."""

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.db import claims
from scheduler.db import instances as db_instances
from scheduler.driver import plugins
from scheduler.filters import availability_zone
from scheduler.filters import compute
from scheduler.filters import resource_fit
from scheduler.weighers import resources

from .. import fakes


def test_default_pipelines_load_in_order(conf):
    filters = plugins.load_filters(conf)
    weighers = plugins.load_weighers(conf)
    assert [type(f) for f in filters][:3] == [
        compute.ComputeFilter, availability_zone.AvailabilityZoneFilter,
        resource_fit.ResourceFitFilter]
    assert [f.name for f in filters] == list(
        conf.filter_scheduler.enabled_filters)
    assert [w.name for w in weighers] == list(
        conf.filter_scheduler.enabled_weighers)
    assert [type(w) for w in weighers][:2] == [resources.RAMWeigher,
                                               resources.CPUWeigher]


def test_configured_order_is_kept(conf):
    conf.set_override('enabled_filters',
                      ['ResourceFitFilter', 'AllHostsFilter',
                       'ComputeFilter'], 'filter_scheduler')
    assert [f.name for f in plugins.load_filters(conf)] == [
        'ResourceFitFilter', 'AllHostsFilter', 'ComputeFilter']


def test_plugins_get_the_config(conf):
    conf.set_override('service_down_time', 123, 'scheduler')
    conf.set_override('enabled_filters', ['ComputeFilter'],
                      'filter_scheduler')
    assert plugins.load_filters(conf)[0].service_down_time == 123


def test_unknown_filter_is_named_with_what_is_available(conf):
    conf.set_override('enabled_filters', ['ComputeFilter', 'NoSuchFilter'],
                      'filter_scheduler')
    with pytest.raises(exception.PluginLoadError) as info:
        plugins.load_filters(conf)
    message = str(info.value)
    assert 'NoSuchFilter' in message
    assert 'scheduler.filters' in message
    assert 'ResourceFitFilter' in message  # lists what is available


def test_unknown_weigher_is_named(conf):
    conf.set_override('enabled_weighers', ['GPUWeigher'],
                      'filter_scheduler')
    with pytest.raises(exception.PluginLoadError, match='GPUWeigher'):
        plugins.load_weighers(conf)


def test_duplicate_filter_is_named(conf):
    conf.set_override('enabled_filters',
                      ['ComputeFilter', 'ResourceFitFilter',
                       'ComputeFilter'], 'filter_scheduler')
    with pytest.raises(exception.PluginLoadError) as info:
        plugins.load_filters(conf)
    assert 'more than once: ComputeFilter' in str(info.value)


def test_duplicate_weigher_is_named(conf):
    conf.set_override('enabled_weighers', ['RAMWeigher', 'RAMWeigher'],
                      'filter_scheduler')
    with pytest.raises(exception.PluginLoadError, match='RAMWeigher'):
        plugins.load_weighers(conf)


def test_zero_multiplier_names_weigher_and_option(conf):
    conf.set_override('enabled_weighers', ['RAMWeigher', 'CPUWeigher'],
                      'filter_scheduler')
    conf.set_override('cpu_weight_multiplier', 0.0, 'filter_scheduler')
    with pytest.raises(exception.PluginLoadError) as info:
        plugins.load_weighers(conf)
    message = str(info.value)
    assert 'CPUWeigher' in message and 'cpu_weight_multiplier' in message
    assert 'RAMWeigher' not in message


def test_negative_multiplier_is_allowed(conf):
    conf.set_override('enabled_weighers', ['DiskWeigher'],
                      'filter_scheduler')
    conf.set_override('disk_weight_multiplier', -1.0, 'filter_scheduler')
    assert plugins.load_weighers(conf)[0].multiplier == -1.0


STORE_UUIDS = ['6f1b3c2e-1d2a-4c5b-9e8f-0a1b2c3d4e%02d' % i for i in range(4)]


def test_stored_data_reads_instances_and_claims(db):
    first, second, claimed, unknown = STORE_UUIDS
    db_instances.save_instances(db, 'h1', [
        objects.InstanceInfo(uuid=first), objects.InstanceInfo(uuid=second)])
    provider = fakes.report(db, 'h2')
    claims.claim_resources(db, [claims.Claim(claimed, provider, {'VCPU': 1},
                                             host='h2')])
    store = plugins.StoredData(db, consumers=[claimed])
    assert store.instance_hosts([first, claimed, unknown]) == {'h1', 'h2'}
    assert store.instance_hosts([]) == frozenset()
    assert store.reported_members([first, second, claimed]) == {'h1': 2}


def test_the_fake_store_answers_what_the_real_one_does():
    def methods(cls):
        return {n for n in vars(cls) if not n.startswith('_')}
    assert methods(fakes.StoredData) - {'calls'} == methods(
        plugins.StoredData)


def test_preload_keeps_answers_by_plugin_name_and_drops_old_ones(conf):
    class _Answers(resources.RAMWeigher):
        answer = None

        def preload(self, request, store):
            return self.answer

    weigher = _Answers(conf)
    request = fakes.request_state()
    weigher.answer = {'h1'}
    plugins.preload([weigher], request, fakes.StoredData())
    assert weigher.preloaded(request) == {'h1'}
    assert request.preloaded == {'_Answers': {'h1'}}
    weigher.answer = None  # the next attempt finds nothing
    plugins.preload([weigher], request, fakes.StoredData())
    assert weigher.preloaded(request) is None and request.preloaded == {}
