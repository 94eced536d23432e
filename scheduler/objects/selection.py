"""Selection: one destination chosen (or offered as alternate) for one
instance. ``select_destinations`` returns a list of them per instance: the
claimed destination first, then unclaimed alternates.

A request of several resource groups (``RequestSpec.resource_groups``)
gets one provider per group: ``selection.provider_for('volume')`` returns
its ``(host, nodename, provider_uuid)``. ``host``, ``nodename`` and
``compute_node_uuid`` are those of the compute group (of the first group
when the request has no compute group, e.g. a volume alone), and
``allocation`` what that provider gives; a request without groups has one
group, ``'compute'``.
"""

from oslo_versionedobjects import fields

from scheduler.objects import base


@base.SchedulerObjectRegistry.register
class Selection(base.SchedulerObject):

    # Version 1.0: Initial version
    # Version 1.1: Added providers (one provider per resource group)
    VERSION = '1.1'
    #: what a request without resource groups is answered with on the
    #: wire (``scheduler.manager``): its caller may be of a release that
    #: reads 1.0 only, and such a selection has no ``providers`` to lose
    LEGACY_VERSION = '1.0'

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
        # group name -> [host, nodename, provider uuid]
        'providers': fields.DictOfListOfStringsField(default={}),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if base.version_tuple(target_version) < (1, 1):
            primitive.pop('providers', None)

    def provider_for(self, group_name):
        """``(host, nodename, provider_uuid)`` of the provider given to
        resource group ``group_name``; KeyError for an unknown group."""
        providers = self.get('providers') or {}
        if group_name in providers:
            return tuple(providers[group_name])
        if not providers and group_name == 'compute':
            return (self.host, self.nodename, self.compute_node_uuid)
        raise KeyError('no resource group %r in this selection (groups: '
                       '%s)' % (group_name, ', '.join(sorted(providers))
                                or 'compute'))
