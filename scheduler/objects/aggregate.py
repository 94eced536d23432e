"""Aggregate: a named set of hosts with metadata, pushed by its owner.

Metadata drives several filters and weighers: ``availability_zone``,
``filter_tenant_id`` (tenant isolation), ``cpu_allocation_ratio`` and
friends, ``<name>_weight_multiplier`` overrides, image properties and
flavor extra specs for the isolation filters.
"""

from oslo_versionedobjects import fields

from scheduler.objects import base


@base.SchedulerObjectRegistry.register
class Aggregate(base.SchedulerObject):

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'uuid': fields.UUIDField(),
        'name': fields.StringField(nullable=True),
        'hosts': fields.ListOfStringsField(default=[]),
        'metadata': fields.DictOfStringsField(default={}),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)

    @property
    def availability_zone(self):
        return self.get('metadata', {}).get('availability_zone')
