"""How RPC arguments are read from the wire into what the manager takes.

Run by the edge (``scheduler.edge.dispatcher``) after deserialization and
before the schemas apply; the edge hands what it read to the manager in
an ``EdgeRequest`` (``scheduler.edge.request``), which reads nothing
again. The manager's RPC methods read their arguments themselves for
in-process callers (the simulator, the bench, tests). A value that
cannot be read raises ``InvalidField`` naming it:

* ``spec_obj``: a RequestSpec, or nova's RequestSpec primitive
  (``RequestSpec.from_nova``); a request of resource groups alone gets an
  empty flavor; unset fields get their defaults;
* a tracker report: ``name`` and ``stats`` into a ComputeNode
  (``ComputeNode.from_stats``; the one the serializer built from the
  message is completed in place, not copied), its unsent fields set to
  their defaults: the schema was applied before, to the fields the
  tracker sent (``scheduler.edge.validation``), so that a report leaving
  out its capacity is refused, not read as zero;
* ``aggregates``, ``instance_info``: one object or a list of them, each
  complete.
"""

from scheduler import exception
from scheduler.model import names
from scheduler import objects
from scheduler.objects import nova_compat

def request_spec(spec_obj):
    if spec_obj is None:
        raise exception.InvalidField(field='spec_obj', reason='missing')
    if nova_compat.is_nova_request_spec(spec_obj):
        # a caller speaking nova's RPC: its objects arrive as dicts
        spec_obj = objects.RequestSpec.from_nova(spec_obj)
    if not isinstance(spec_obj, objects.RequestSpec):
        raise exception.InvalidField(
            field='spec_obj', reason='expected a RequestSpec object, '
            'got %s' % type(spec_obj).__name__)
    if not spec_obj.obj_attr_is_set('flavor'):
        if not spec_obj.get('resource_groups'):
            raise exception.InvalidField(field='spec_obj.flavor',
                                         reason='missing')
        # resource groups alone (a volume, a port): no instance size
        spec_obj.flavor = objects.Flavor(vcpus=0, memory_mb=0)
    # callers may leave fields unset (num_instances, extra_specs ...)
    return spec_obj.obj_complete('spec_obj')


def report(name, stats, received=False):
    """The ComputeNode of a report of ``stats`` under ``name``;
    ``received``: as ``read``."""
    host, node = names.parse_name(name)
    return objects.ComputeNode.from_stats(host, node, stats, adopt=received)


def object_list(value, cls, field):
    """One object or a list of them, all of class ``cls`` and complete
    (a required field left unset, such as ``uuid``, is refused)."""
    items = value if isinstance(value, (list, tuple)) else [value]
    for index, item in enumerate(items):
        if not isinstance(item, cls):
            raise exception.InvalidField(
                field='%s[%d]' % (field, index),
                reason='expected %s, got %s' % (cls.obj_name(),
                                                type(item).__name__))
        item.obj_complete('%s[%d]' % (field, index))
    return list(items)


def read(method, args, received=False):
    """``args`` of ``method`` as the manager takes them. ``received``:
    ``args`` were just deserialized from a message and nobody else holds
    them, so a report's ComputeNode is completed in place instead of
    copied (``ComputeNode.from_stats``'s ``adopt``: the copy was a
    third of a report's dispatch)."""
    args = dict(args)
    if method == 'select_destinations':
        args['spec_obj'] = request_spec(args.get('spec_obj'))
    elif method == 'update_resource_stats' and 'name' in args:
        args['stats'] = report(args['name'], args.get('stats'), received)
    elif method == 'update_aggregates' and 'aggregates' in args:
        args['aggregates'] = object_list(args['aggregates'],
                                         objects.Aggregate, 'aggregates')
    elif method == 'update_instance_info' and 'instance_info' in args:
        args['instance_info'] = object_list(
            args['instance_info'], objects.InstanceInfo, 'instance_info')
    return args
