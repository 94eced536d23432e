"""ImagePropertiesWeigher and the per-host image property counts it reads.

Instances reach the counts through the database: saved with
``save_instances``, forgotten with ``delete_instance``/``prune_host``, and
pulled incrementally by the worker's HostStateCache.
"""

import uuid

import pytest

from scheduler import exception
from scheduler import objects
from scheduler.model import resource_classes as rcs
from scheduler.db import instances as db_instances
from scheduler.db import providers as db_providers
from scheduler.host_state import HostStateCache
from scheduler.model.request_state import RequestState
from scheduler.weighers import image_properties

RATIOS = {rcs.VCPU: 1.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}


def _instance(distro, os_type='linux'):
    return objects.InstanceInfo(
        uuid=str(uuid.uuid4()),
        image_properties={'os_distro': distro, 'os_type': os_type})


def _request(distro):
    spec = objects.RequestSpec.from_primitives({
        'instance_type': {'vcpus': 1, 'memory_mb': 128},
        'image': {'properties': {'os_distro': distro}}})
    return RequestState.from_spec(spec)


@pytest.fixture
def cache(db):
    for host in ('h1', 'h2', 'h3'):
        db_providers.record_compute_node(db, objects.ComputeNode.from_stats(
            host, host, {'vcpus': 8, 'memory_mb': 8192, 'local_gb': 80}),
            RATIOS)
    return HostStateCache(db, image_properties=('os_distro', 'os_type'))


def _weights(conf, cache, distro):
    weigher = image_properties.ImagePropertiesWeigher(conf)
    table = cache.table
    rows = [table.rows_of_host(h)[0] for h in ('h1', 'h2', 'h3')]
    return list(weigher.weigh_all(table, rows, _request(distro)))


def test_hosts_running_the_same_image_weigh_more(conf, db, cache):
    db_instances.save_instances(db, 'h1', [_instance('ubuntu')])
    db_instances.save_instances(db, 'h2', [_instance('ubuntu'),
                                           _instance('ubuntu')])
    db_instances.save_instances(db, 'h3', [_instance('fedora')])
    cache.refresh()
    assert _weights(conf, cache, 'ubuntu') == [1.0, 2.0, 0.0]
    assert _weights(conf, cache, 'fedora') == [0.0, 0.0, 1.0]


def test_forgotten_and_moved_instances_stop_counting(conf, db, cache):
    moved = _instance('ubuntu')
    gone = _instance('ubuntu')
    db_instances.save_instances(db, 'h1', [moved, gone])
    cache.refresh()
    assert _weights(conf, cache, 'ubuntu') == [2.0, 0.0, 0.0]
    db_instances.delete_instance(db, 'h1', gone.uuid)
    db_instances.save_instances(db, 'h3', [moved])    # migrated
    cache.refresh()
    assert _weights(conf, cache, 'ubuntu') == [0.0, 0.0, 1.0]
    db_instances.prune_host(db, 'h3', [])
    cache.refresh()
    assert _weights(conf, cache, 'ubuntu') == [0.0, 0.0, 0.0]


def test_ratios_come_from_the_setting(conf, db, cache):
    conf.set_override('image_props_weight_setting',
                      ['os_distro=2.5', 'os_type=0'], 'filter_scheduler')
    db_instances.save_instances(db, 'h2', [_instance('ubuntu')])
    cache.refresh()
    assert _weights(conf, cache, 'ubuntu') == [0.0, 2.5, 0.0]


@pytest.mark.parametrize('entry', ['os_distro', 'os_distro=x', '=1.0'])
def test_a_bad_setting_stops_the_weigher_from_loading(conf, entry):
    conf.set_override('image_props_weight_setting', [entry],
                      'filter_scheduler')
    with pytest.raises(exception.PluginLoadError) as info:
        image_properties.ImagePropertiesWeigher(conf)
    assert 'image_props_weight_setting' in str(info.value)


def test_instances_are_not_loaded_when_no_property_is_counted(db):
    db_instances.save_instances(db, 'h1', [_instance('ubuntu')])
    cache = HostStateCache(db)
    cache.refresh()
    assert not cache.table.image_properties.enabled
    assert cache.table.image_properties.count('h1', 'os_distro',
                                              'ubuntu') == 0
