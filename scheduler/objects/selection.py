"""Selection: one destination chosen (or offered as alternate) for one
instance. ``select_destinations`` returns a list of them per instance: the
claimed destination first, then unclaimed alternates."""

from oslo_versionedobjects import fields

from scheduler.objects import base


@base.SchedulerObjectRegistry.register
class Selection(base.SchedulerObject):

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'host': fields.StringField(),
        'nodename': fields.StringField(nullable=True),
        'compute_node_uuid': fields.UUIDField(),
        'instance_uuid': fields.StringField(nullable=True),
        # The consumer the resources were claimed for; None on alternates.
        'allocation_id': fields.StringField(nullable=True),
        # resource class -> amount claimed on this host for the instance
        'allocation': fields.DictOfIntegersField(default={}),
        # resource class -> capacity the host may be filled up to
        'limits': fields.DictOfIntegersField(default={}),
        'weight': fields.FloatField(default=0.0),
        'is_alternate': fields.BooleanField(default=False),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
