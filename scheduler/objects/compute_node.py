"""ComputeNode: what a resource tracker reports for one (host, node).

``ComputeNode.from_stats(host, node, stats)`` builds one from the
``update_resource_stats`` dict (keys are nova's compute_nodes columns).
``*_used`` amounts are what instances use on the host, not counting the
``reserved_host_*`` amounts the host keeps for itself.

A nova ComputeNode, as nova's resource tracker reports it (plain fields or
its wire form), is accepted too: ``supported_hv_specs``, PCI device pool
objects and nova's NUMA topology JSON are read into the fields above, and
the fields the scheduler does not use (``id``, ``service_id``,
``mapped``...) are dropped with a debug line (``nova_compat``).

Any provider (a storage backend, a network segment ...) reports through
the same object: ``kind`` ('compute' by default), ``inventories`` ({resource
class: {total, reserved, min_unit, max_unit, step_size,
allocation_ratio}}), ``used`` ({resource class: amount}), ``traits`` and
``locality`` ({'availability_zone', 'row', 'rack', any key: value}).
``scheduler.model.generic_inventory`` validates them (names of custom
classes and traits, amounts) and turns them into inventory rows beside the
classic fields' VCPU, MEMORY_MB and DISK_GB.
"""

from oslo_versionedobjects import fields

from scheduler import exception
from scheduler.model import generic_inventory
from scheduler.objects import base
from scheduler.objects import nova_compat
from scheduler.objects import timestamps

# Fields the tracker may not set: they identify the record.
_IDENTITY = ('host', 'hypervisor_hostname')

# what a report of any provider adds to nova's compute_nodes fields
GENERIC_FIELDS = ('kind', 'inventories', 'used', 'traits', 'locality')


@base.SchedulerObjectRegistry.register
class ComputeNode(base.SchedulerObject):

    # Version 1.0: Initial version
    # Version 1.1: Added kind, inventories, used, traits and locality
    #              (generic providers)
    VERSION = '1.1'

    fields = {
        'uuid': fields.UUIDField(nullable=True),
        'host': fields.StringField(),
        'hypervisor_hostname': fields.StringField(nullable=True),
        'vcpus': fields.NonNegativeIntegerField(default=0),
        'memory_mb': fields.NonNegativeIntegerField(default=0),
        'local_gb': fields.NonNegativeIntegerField(default=0),
        'vcpus_used': fields.NonNegativeIntegerField(default=0),
        'memory_mb_used': fields.NonNegativeIntegerField(default=0),
        'local_gb_used': fields.NonNegativeIntegerField(default=0),
        'free_ram_mb': fields.IntegerField(nullable=True),
        'free_disk_gb': fields.IntegerField(nullable=True),
        'disk_available_least': fields.IntegerField(nullable=True),
        'running_vms': fields.NonNegativeIntegerField(default=0),
        'current_workload': fields.NonNegativeIntegerField(default=0),
        'hypervisor_type': fields.StringField(nullable=True),
        'hypervisor_version': fields.IntegerField(nullable=True),
        'cpu_info': fields.StringField(nullable=True),
        'host_ip': fields.IPAddressField(nullable=True),
        # [[architecture, hypervisor_type, vm_mode], ...]
        'supported_instances': fields.ListOfListsOfStringsField(default=[]),
        'stats': fields.DictOfNullableStringsField(default={}),
        # JSON text, as nova's compute_nodes columns hold them
        'metrics': fields.StringField(nullable=True),
        'numa_topology': fields.StringField(nullable=True),
        'pci_device_pools': fields.ListOfDictOfNullableStringsField(
            default=[]),
        'cpu_allocation_ratio': fields.NonNegativeFloatField(nullable=True),
        'ram_allocation_ratio': fields.NonNegativeFloatField(nullable=True),
        'disk_allocation_ratio': fields.NonNegativeFloatField(
            nullable=True),
        'reserved_host_cpus': fields.NonNegativeIntegerField(default=0),
        'reserved_host_memory_mb': fields.NonNegativeIntegerField(default=0),
        'reserved_host_disk_mb': fields.NonNegativeIntegerField(default=0),
        'disabled': fields.BooleanField(default=False),
        'availability_zone': fields.StringField(nullable=True),
        'updated_at': timestamps.DateTimeField(nullable=True),  # usec
        'kind': fields.StringField(default='compute'),
        'inventories': fields.Field(fields.Dict(fields.Dict(
            fields.Float())), default={}),
        'used': fields.DictOfIntegersField(default={}),
        'traits': fields.ListOfStringsField(default=[]),
        'locality': fields.DictOfStringsField(default={}),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        version = base.version_tuple(target_version)
        if version < (1, 1):
            for name in GENERIC_FIELDS:
                primitive.pop(name, None)

    @property
    def nodename(self):
        return self.get('hypervisor_hostname') or self.host

    @classmethod
    def from_stats(cls, host, node, stats, adopt=False):
        """Build from an ``update_resource_stats`` payload.

        ``stats`` is a dict of compute_nodes fields or a ComputeNode.
        Unknown or ill-typed fields raise ``InvalidField`` naming them.
        ``adopt``: a ComputeNode ``stats`` is held by nobody else (the RPC
        edge deserialized it from the message, which coerced every field
        it sets): it is completed in place rather than copied, with the
        same checks and the same result.
        """
        if not isinstance(host, str) or not host:
            raise exception.InvalidField(
                field='name', reason='host must be a non-empty string, '
                'got %r' % (host,))
        unset = _adoptable(stats) if adopt else None
        if unset is not None:
            node_obj = stats
            # as a copy: the newest version, no context of the message
            node_obj.VERSION = cls.VERSION
            node_obj._context = None
            node_obj.host = host
            node_obj.hypervisor_hostname = node or host
        else:
            node_obj = cls(host=host, hypervisor_hostname=node or host)
            node_obj.obj_set_from_dict(_values(cls, host, stats), 'stats')
            unset = set(cls.fields) - node_obj.obj_set_fields()
        for name, field in cls.fields.items():
            if name not in unset:
                continue
            if field.default is not fields.UnspecifiedDefault:
                setattr(node_obj, name, field.default)
            elif field.nullable:
                setattr(node_obj, name, None)
        return generic_inventory.check_report(node_obj)


def _adoptable(node):
    """The fields ComputeNode ``node`` leaves unset if it can be
    completed in place (those it says changed without a value included:
    they get their defaults, as in a copy), None if it is no
    ComputeNode."""
    if not isinstance(node, ComputeNode):
        return None
    return set(node.fields) - node.obj_set_fields() - set(_IDENTITY)


def _values(cls, host, stats):
    """The fields of report ``stats`` (a dict or a ComputeNode) that a
    new ComputeNode of ``host`` takes."""
    if isinstance(stats, cls):
        # the fields set (one its primitive calls changed without a value
        # is not: reading it would raise)
        return {k: getattr(stats, k) for k in stats.fields
                if k not in _IDENTITY and stats.obj_attr_is_set(k)}
    if isinstance(stats, dict):
        stats = nova_compat.compute_node_stats(stats)
        if 'host' in stats and stats['host'] != host:
            raise exception.InvalidField(
                field='stats.host', reason='%r does not match the name '
                '%r it is reported under' % (stats['host'], host))
        return {k: v for k, v in stats.items() if k not in _IDENTITY}
    raise exception.InvalidField(
        field='stats', reason='expected a dict or ComputeNode, got '
        '%s' % type(stats).__name__)
