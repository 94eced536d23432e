"""Payload of the scheduler's versioned notifications.

``scheduler.select_destinations.start`` / ``.end`` / ``.error`` carry a
``SelectDestinationsPayload`` serialized as a versioned object primitive,
so consumers can check its version like any other object on the wire.
"""

from oslo_versionedobjects import fields

from scheduler.objects import base


@base.SchedulerObjectRegistry.register
class SelectDestinationsPayload(base.SchedulerObject):

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'request_id': fields.StringField(nullable=True),
        'project_id': fields.StringField(nullable=True),
        'num_instances': fields.IntegerField(),
        'flavor': fields.ObjectField('Flavor', nullable=True),
        'availability_zone': fields.StringField(nullable=True),
        'instance_uuids': fields.ListOfStringsField(default=[]),
        # set on .end: the claimed host of each instance, in order
        'hosts': fields.ListOfStringsField(default=[]),
        'duration_ms': fields.FloatField(nullable=True),
        # set on .error
        'error': fields.StringField(nullable=True),
        'error_class': fields.StringField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
