"""Builders of test data: provider dicts, host tables, requests, reports.

``provider()`` returns the dict shape
``scheduler.db.provider_reads.load_changes`` yields, with inventories
computed by the real ``inventories_from_node`` from a ComputeNode report,
so capacity (``(total - reserved) * allocation_ratio``) is never
hand-computed here.
"""

import datetime

from scheduler import objects
from scheduler.objects import base as objects_base
from scheduler.model import resource_classes as rcs
from scheduler.db import providers as db_providers
from scheduler.db import provider_reads
from scheduler.host_state import HostTable
from scheduler.model.request_state import RequestState

#: a fixed "now" (naive UTC, as the database stores it)
NOW = datetime.datetime(2026, 3, 1, 12, 0, 0)
NOW_TS = NOW.replace(tzinfo=datetime.timezone.utc).timestamp()

#: the [scheduler] default_*_allocation_ratio defaults
RATIO_DEFAULTS = {rcs.VCPU: 4.0, rcs.MEMORY_MB: 1.0, rcs.DISK_GB: 1.0}

HOST_SHAPE = {'vcpus': 8, 'memory_mb': 16384, 'local_gb': 500}


def compute_node(host, node=None, **stats):
    return objects.ComputeNode.from_stats(host, node or host,
                                          dict(HOST_SHAPE, **stats))


def provider(provider_id, host, node=None, *, claimed=None,
             reported_at=NOW, change_seq=None, generation=0, **stats):
    """A provider dict for ``HostTable.apply``.

    ``stats`` are ComputeNode fields (vcpus, memory_mb_used,
    cpu_allocation_ratio, disabled, availability_zone ...); ``claimed``
    maps resource class to the amount claims hold.
    """
    node_obj = compute_node(host, node, **stats)
    inventories = db_providers.inventories_from_node(node_obj,
                                                     RATIO_DEFAULTS)
    for rc, inv in inventories.items():
        inv['claimed'] = (claimed or {}).get(rc, 0)
    return {
        'id': provider_id,
        'uuid': '00000000-0000-4000-8000-%012d' % provider_id,
        'host': host,
        'nodename': node_obj.nodename,
        'generation': generation,
        'change_seq': provider_id if change_seq is None else change_seq,
        'disabled': node_obj.disabled,
        'availability_zone': node_obj.availability_zone,
        'reported_at': reported_at,
        'attributes': '{}',
        'inventories': inventories,
    }


def host_table(*providers):
    table = HostTable()
    table.apply(providers)
    return table


def request_spec(vcpus=1, memory_mb=512, root_gb=0, **fields):
    flavor = objects.Flavor(vcpus=vcpus, memory_mb=memory_mb,
                            root_gb=root_gb, ephemeral_gb=0, swap=0)
    spec = objects.RequestSpec(flavor=flavor)
    # complete, as the manager hands it to the driver
    return spec.obj_set_from_dict(fields, 'spec').obj_complete('spec')


def request_state(vcpus=1, memory_mb=512, root_gb=0, now=NOW_TS,
                  is_admin=False, **fields):
    """RequestState of a one-flavor request evaluated at ``now``."""
    return RequestState.from_spec(
        request_spec(vcpus, memory_mb, root_gb, **fields),
        is_admin=is_admin, now=now)


class StoredData:
    """What ``scheduler.driver.plugins.StoredData`` answers, from fixed
    data and without a database: ``instances`` maps an instance UUID to
    its host; every call is recorded in ``calls``."""

    def __init__(self, instances=None, group_members=None):
        self.instances = dict(instances or {})
        self.group_members = dict(group_members or {})
        self.calls = []

    def instance_hosts(self, instance_uuids):
        self.calls.append(('instance_hosts', list(instance_uuids)))
        return frozenset(self.instances[u] for u in instance_uuids
                         if u in self.instances)

    def group_member_hosts(self, group_uuid):
        self.calls.append(('group_member_hosts', group_uuid))
        return dict(self.group_members.get(group_uuid, {}))

    def reported_members(self, instance_uuids):
        self.calls.append(('reported_members', list(instance_uuids)))
        counts = {}
        for uuid in instance_uuids:
            if uuid in self.instances:
                host = self.instances[uuid]
                counts[host] = counts.get(host, 0) + 1
        return counts


def report(db, host, node=None, updated_at=None, **stats):
    """Record a tracker report in the database; returns the provider id."""
    node_obj = compute_node(host, node, **stats)
    if updated_at is not None:
        node_obj.updated_at = updated_at
    db_providers.record_compute_node(db, node_obj, RATIO_DEFAULTS)
    return provider_reads.find_provider(db, node_obj.nodename)['id']


def fields_of(value):
    """Field values of an object (recursively), for comparisons.

    ``==`` on versioned objects compares primitives, whose ``changes`` list
    comes from a set and so may be in any order: two equal objects can
    compare unequal. Compare ``fields_of(a) == fields_of(b)`` instead.
    """
    if isinstance(value, objects_base.SchedulerObject):
        return (value.obj_name(), value.VERSION,
                {name: fields_of(getattr(value, name))
                 for name in value.fields if value.obj_attr_is_set(name)})
    if isinstance(value, (list, tuple)):
        return [fields_of(item) for item in value]
    if isinstance(value, dict):
        return {key: fields_of(item) for key, item in value.items()}
    return value


def sorted_changes(primitive):
    """An object primitive with its ``changes`` lists sorted (see
    ``fields_of`` for why)."""
    if isinstance(primitive, dict):
        return {key: sorted(value) if key.endswith('.changes')
                else sorted_changes(value)
                for key, value in primitive.items()}
    if isinstance(primitive, list):
        return [sorted_changes(item) for item in primitive]
    return primitive
