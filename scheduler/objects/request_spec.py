"""RequestSpec and the small objects it carries: what to place.

``RequestSpec.from_primitives(request_spec, filter_properties)`` accepts the
legacy nova-style dict pair so that old callers keep working. Unknown keys
and ill-typed values raise ``scheduler.exception.InvalidField`` (a
``ValueError``) naming the offending field, e.g.
``request_spec.instance_type.vcpus``.

What nova 34 puts in the legacy dicts is accepted in every form it sends
it (plain dicts, or its wire form of objects such as the flavor); fields
the scheduler does not use are dropped with a debug line
(``scheduler.objects.nova_compat``). ``RequestSpec.from_nova(primitive)``
reads a whole nova RequestSpec.
"""

from oslo_utils import uuidutils
from oslo_versionedobjects import fields

from scheduler import exception
from scheduler.objects import base
from scheduler.objects import nova_compat
from scheduler.objects import resource_group

REGISTRY = base.SchedulerObjectRegistry

GROUP_POLICIES = ('affinity', 'anti-affinity', 'soft-affinity',
                  'soft-anti-affinity')


@REGISTRY.register
class Flavor(base.SchedulerObject):
    """Resources one instance needs."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'flavorid': fields.StringField(nullable=True),
        'name': fields.StringField(nullable=True),
        'vcpus': fields.NonNegativeIntegerField(),
        'memory_mb': fields.NonNegativeIntegerField(),
        'root_gb': fields.NonNegativeIntegerField(default=0),
        'ephemeral_gb': fields.NonNegativeIntegerField(default=0),
        'swap': fields.NonNegativeIntegerField(default=0),
        'extra_specs': fields.DictOfStringsField(default={}),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)


@REGISTRY.register
class ImageMeta(base.SchedulerObject):
    """The image an instance boots from; filters read its properties."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'id': fields.StringField(nullable=True),
        'name': fields.StringField(nullable=True),
        'min_ram': fields.NonNegativeIntegerField(default=0),
        'min_disk': fields.NonNegativeIntegerField(default=0),
        'properties': fields.DictOfNullableStringsField(default={}),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)


@REGISTRY.register
class InstanceGroup(base.SchedulerObject):
    """A server group and its placement policy."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'uuid': fields.StringField(nullable=True),
        'name': fields.StringField(nullable=True),
        'policy': fields.StringField(nullable=True),
        'rules': fields.DictOfStringsField(default={}),
        'members': fields.ListOfStringsField(default=[]),
        'hosts': fields.ListOfStringsField(default=[]),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)


@REGISTRY.register
class SchedulerRetries(base.SchedulerObject):
    """Hosts already tried for this request; they are excluded."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'num_attempts': fields.NonNegativeIntegerField(default=0),
        # [host, node] pairs
        'hosts': fields.ListOfListsOfStringsField(default=[]),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)


@REGISTRY.register
class Destination(base.SchedulerObject):
    """A destination the caller requires (host and optionally node)."""

    # Version 1.0: Initial version
    VERSION = '1.0'

    fields = {
        'host': fields.StringField(),
        'node': fields.StringField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)


def _sub_object(cls, value, path):
    if value is None or isinstance(value, cls):
        return value
    if not isinstance(value, dict):
        raise exception.InvalidField(
            field=path, reason='expected a dict or %s, got %s' %
            (cls.obj_name(), type(value).__name__))
    # a required field left unset would only fail later, in a filter
    return cls().obj_set_from_dict(value, path).obj_complete(path)


@REGISTRY.register
class RequestSpec(base.SchedulerObject):
    """Everything the scheduler needs to place ``num_instances`` instances."""

    # Version 1.0: Initial version
    # Version 1.1: Added is_bfv (boot from volume: no root disk to place)
    # Version 1.2: Added resource_groups and locality (several providers
    #              per instance: compute, storage, network ...)
    VERSION = '1.2'

    fields = {
        'num_instances': fields.IntegerField(default=1),
        'flavor': fields.ObjectField('Flavor'),
        'image': fields.ObjectField('ImageMeta', nullable=True),
        'availability_zone': fields.StringField(nullable=True),
        'scheduler_hints': fields.DictOfListOfStringsField(default={}),
        'instance_group': fields.ObjectField('InstanceGroup',
                                             nullable=True),
        'ignore_hosts': fields.ListOfStringsField(nullable=True),
        'force_hosts': fields.ListOfStringsField(nullable=True),
        'force_nodes': fields.ListOfStringsField(nullable=True),
        'requested_destination': fields.ObjectField('Destination',
                                                    nullable=True),
        'project_id': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'instance_uuids': fields.ListOfStringsField(nullable=True),
        'retry': fields.ObjectField('SchedulerRetries', nullable=True),
        'is_bfv': fields.BooleanField(default=False),
        'resource_groups': fields.ListOfObjectsField('ResourceGroup',
                                                     default=[]),
        'locality': fields.ListOfObjectsField('LocalityRule', default=[]),
    }

    # every version of RequestSpec so far carries 1.0 of its sub-objects
    obj_relationships = {
        name: [('1.0', '1.0')] for name in (
            'flavor', 'image', 'instance_group', 'requested_destination',
            'retry')}
    obj_relationships.update({'resource_groups': [('1.2', '1.0')],
                              'locality': [('1.2', '1.0')]})

    def obj_make_compatible(self, primitive, target_version):
        version = base.version_tuple(target_version)
        if version < (1, 2) and primitive.get('resource_groups'):
            # dropping them would place a different request
            raise exception.InvalidField(
                field='spec_obj.resource_groups',
                reason='RequestSpec %s (the version the [upgrade_levels] '
                'scheduler cap allows) has no resource groups; lift the '
                'cap once every worker is upgraded' % target_version)
        super().obj_make_compatible(primitive, target_version)
        if version < (1, 1):
            primitive.pop('is_bfv', None)
        if version < (1, 2):
            primitive.pop('resource_groups', None)
            primitive.pop('locality', None)

    @classmethod
    def from_primitives(cls, request_spec, filter_properties=None):
        """Build a RequestSpec from the legacy (dict, dict) pair."""
        return _LegacyTranslator(request_spec, filter_properties).build()

    @classmethod
    def from_nova(cls, primitive, path='spec_obj'):
        """Build a RequestSpec from a nova RequestSpec primitive (its wire
        form, as a caller that speaks nova's RPC sends it)."""
        values = nova_compat.request_spec_fields(primitive, path)
        for name, sub_cls in (('flavor', Flavor), ('image', ImageMeta),
                              ('instance_group', InstanceGroup),
                              ('requested_destination', Destination),
                              ('retry', SchedulerRetries)):
            values[name] = _sub_object(sub_cls, values.get(name),
                                       '%s.%s' % (path, name))
        # nova leaves some fields None that have defaults here
        values = {k: v for k, v in values.items() if v is not None
                  or k not in cls.fields or cls.fields[k].nullable}
        return cls().obj_set_from_dict(values, path).obj_complete(path)


class _LegacyTranslator:
    """Turns nova's legacy request_spec/filter_properties into a RequestSpec.

    Keys nova sends that carry nothing the scheduler uses are accepted and
    ignored (``_IGNORED_*``); any other unknown key is an error.
    """

    _SPEC_KEYS = {'image', 'instance_properties', 'instance_type',
                  'num_instances', 'instance_uuids', 'resource_groups',
                  'locality'}
    _IGNORED_SPEC_KEYS = {'security_group', 'block_device_mapping',
                          'instance_group'}
    _INSTANCE_KEYS = {'project_id', 'user_id', 'availability_zone', 'uuid',
                      'memory_mb', 'vcpus', 'root_gb', 'ephemeral_gb',
                      'swap'}
    _IGNORED_INSTANCE_KEYS = {'display_name', 'hostname', 'os_type',
                              'instance_type_id', 'numa_topology',
                              'pci_requests', 'metadata', 'image_ref',
                              'launch_index', 'reservation_id'}
    _FILTER_KEYS = {'scheduler_hints', 'group_policies', 'group_hosts',
                    'group_members', 'group_uuid', 'group_name', 'retry',
                    'force_hosts', 'force_nodes', 'ignore_hosts',
                    'instance_type', 'requested_destination', 'project_id',
                    'user_id', 'availability_zone'}
    # group_updated: nova's marker that the group_* keys are present
    _IGNORED_FILTER_KEYS = {'limits', 'config_options', 'context',
                            'request_spec', 'pci_requests', 'os_type',
                            'instance_properties', 'security_groups',
                            'group_updated'}

    def __init__(self, request_spec, filter_properties):
        self.spec = self._dict(request_spec, 'request_spec')
        self.props = self._dict(filter_properties or {},
                                'filter_properties')

    @staticmethod
    def _dict(value, path):
        if not isinstance(value, dict):
            raise exception.InvalidField(
                field=path,
                reason='expected a dict, got %s' % type(value).__name__)
        return value

    @staticmethod
    def _check_keys(values, known, ignored, path):
        for key in values:
            if key not in known and key not in ignored:
                raise exception.InvalidField(
                    field='%s.%s' % (path, key),
                    reason='unknown field (known: %s)' %
                    ', '.join(sorted(known | ignored)))

    def build(self):
        self._check_keys(self.spec, self._SPEC_KEYS,
                         self._IGNORED_SPEC_KEYS, 'request_spec')
        self._check_keys(self.props, self._FILTER_KEYS,
                         self._IGNORED_FILTER_KEYS, 'filter_properties')
        instance = self._dict(self.spec.get('instance_properties', {}),
                              'request_spec.instance_properties')
        self._check_keys(instance, self._INSTANCE_KEYS,
                         self._IGNORED_INSTANCE_KEYS,
                         'request_spec.instance_properties')
        spec = RequestSpec()
        spec.obj_set_from_dict({
            'num_instances': self.spec.get('num_instances', 1),
            'flavor': self._flavor(instance),
            'image': _sub_object(ImageMeta, self._image(),
                                 'request_spec.image'),
            'availability_zone': self._first(
                'availability_zone', instance),
            'project_id': self._first('project_id', instance),
            'user_id': self._first('user_id', instance),
            'scheduler_hints': self._hints(),
            'instance_group': self._group(),
            'ignore_hosts': self.props.get('ignore_hosts'),
            'force_hosts': self.props.get('force_hosts'),
            'force_nodes': self.props.get('force_nodes'),
            'requested_destination': _sub_object(
                Destination, nova_compat.destination(
                    self.props.get('requested_destination'),
                    'filter_properties.requested_destination'),
                'filter_properties.requested_destination'),
            'instance_uuids': self._instance_uuids(instance),
            'retry': _sub_object(SchedulerRetries, self.props.get('retry'),
                                 'filter_properties.retry'),
            'resource_groups': self._list_of(resource_group.ResourceGroup,
                                             'resource_groups'),
            'locality': self._list_of(resource_group.LocalityRule,
                                      'locality'),
        }, 'request_spec')
        if spec.num_instances < 1:
            raise exception.InvalidField(field='request_spec.num_instances',
                                         reason='must be at least 1')
        return spec

    def _list_of(self, cls, key):
        """``request_spec[key]``: a list of dicts (or objects) of ``cls``."""
        items = self.spec.get(key) or []
        if not isinstance(items, (list, tuple)):
            raise exception.InvalidField(field='request_spec.%s' % key,
                                         reason='expected a list')
        return [_sub_object(cls, item, 'request_spec.%s[%d]' % (key, i))
                for i, item in enumerate(items)]

    def _first(self, key, instance):
        value = self.props.get(key)
        return value if value is not None else instance.get(key)

    def _flavor(self, instance):
        flavor = self.spec.get('instance_type',
                               self.props.get('instance_type'))
        path = 'request_spec.instance_type'
        flavor = nova_compat.flavor(flavor, path)
        if flavor is None:
            # Very old callers only sent the sizes on the instance.
            flavor = {k: instance[k] for k in
                      ('vcpus', 'memory_mb', 'root_gb', 'ephemeral_gb',
                       'swap') if k in instance}
            path = 'request_spec.instance_properties'
        flavor = _sub_object(Flavor, flavor, path)
        for required in ('vcpus', 'memory_mb'):
            if not flavor.obj_attr_is_set(required):
                raise exception.InvalidField(
                    field='%s.%s' % (path, required), reason='missing')
        return flavor

    def _image(self):
        image = self.spec.get('image')
        if not image:
            return None  # nova sends {} when there is no image
        return nova_compat.image(image, 'request_spec.image')

    def _hints(self):
        hints = self._dict(self.props.get('scheduler_hints') or {},
                           'filter_properties.scheduler_hints')
        # nova allows a scalar hint; the object holds lists of strings.
        return {k: [str(i) for i in v] if isinstance(v, (list, tuple))
                else [str(v)] for k, v in hints.items()}

    def _group(self):
        policies = self.props.get('group_policies')
        if not policies:
            return None
        policies = list(policies)
        if len(policies) != 1 or policies[0] not in GROUP_POLICIES:
            raise exception.InvalidField(
                field='filter_properties.group_policies',
                reason='expected exactly one of %s, got %r' %
                (', '.join(GROUP_POLICIES), policies))
        return _sub_object(InstanceGroup, {
            'uuid': self.props.get('group_uuid'),
            'name': self.props.get('group_name'),
            'policy': policies[0],
            'members': list(self.props.get('group_members') or []),
            'hosts': list(self.props.get('group_hosts') or []),
        }, 'filter_properties.group')

    def _instance_uuids(self, instance):
        uuids = self.spec.get('instance_uuids')
        if uuids is None and instance.get('uuid'):
            uuids = [instance['uuid']]
        for index, value in enumerate(uuids or []):
            if not uuidutils.is_uuid_like(value):
                raise exception.InvalidField(
                    field='request_spec.instance_uuids[%d]' % index,
                    reason='not a UUID: %r' % (value,))
        return uuids
