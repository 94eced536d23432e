"""InstanceInfo: one instance a host runs, as its tracker reports it.

The scheduler keeps these per host for the filters and weighers that look
at neighbours: SameHost/DifferentHost, server groups, image-property
affinity, tenant counts.
"""

from oslo_versionedobjects import fields

from scheduler.objects import base


@base.SchedulerObjectRegistry.register
class InstanceInfo(base.SchedulerObject):

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'uuid': fields.UUIDField(),
        'host': fields.StringField(nullable=True),
        'node': fields.StringField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'flavor': fields.ObjectField('Flavor', nullable=True),
        'image_properties': fields.DictOfNullableStringsField(default={}),
        'task_state': fields.StringField(nullable=True),
        'group_uuid': fields.StringField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
