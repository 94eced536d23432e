"""ResourceGroup and LocalityRule: a request of several providers.

A RequestSpec may carry ``resource_groups``: each group is placed on one
provider of its ``kind`` ('compute', 'storage', 'network' or any name)
that has every class of ``resources`` free, every ``required_traits``,
none of the ``forbidden_traits`` and at least one trait of each list of
``any_traits``. ``RequestSpec.locality`` relates groups: the providers of
a rule's ``groups`` share (``'same'``) or must not share
(``'different'``) the value of the locality key ``scope`` ('rack', 'row',
'availability_zone', any key trackers report, or 'host'); a ``hard`` rule
is a filter, a soft one a preference.

These objects hold data only; ``scheduler.model.resource_groups`` validates
them and says what a request without groups means (its flavor is the one
compute group).
"""

from oslo_versionedobjects import fields

from scheduler.objects import base

REGISTRY = base.SchedulerObjectRegistry


@REGISTRY.register
class ResourceGroup(base.SchedulerObject):
    """What one provider of a request must offer."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'name': fields.StringField(),
        'kind': fields.StringField(default='compute'),
        # resource class -> amount per instance; a compute group without
        # resources takes the flavor's
        'resources': fields.DictOfIntegersField(default={}),
        'required_traits': fields.ListOfStringsField(default=[]),
        'forbidden_traits': fields.ListOfStringsField(default=[]),
        # each inner list: at least one of these traits
        'any_traits': fields.ListOfListsOfStringsField(default=[]),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)


@REGISTRY.register
class LocalityRule(base.SchedulerObject):
    """Where the providers of some groups stand relative to each other."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'groups': fields.ListOfStringsField(),
        'scope': fields.StringField(),
        'policy': fields.StringField(default='same'),
        'hard': fields.BooleanField(default=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
