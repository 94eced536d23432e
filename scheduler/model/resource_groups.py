"""What each resource group of a request asks for, and the rules of one.

The rules between fields of a request that JSON Schema cannot say are
pure functions here, each returning ``(path, reason)`` (the path relative
to what they were given, as a list) or None; the RPC edge names them in
its schemas (``scheduler.edge.schemas``), so a request that breaks one
never reaches the driver. They read mappings or objects alike (``.get``):

* ``group_problem(group)``: a group that is not of kind ``'compute'``
  asks for resources; no trait is both required and forbidden;
* ``duplicate_name(groups)``: group names are unique;
* ``compute_groups_problem(groups)``: at most one group of kind
  ``'compute'`` (it is the instance itself);
* ``locality_problem(spec)``: a locality rule names at least two known
  groups;
* ``claims_nothing(spec)``: a request without groups whose flavor claims
  no resource.

``validate(spec, path)`` is the client library's check before it sends:
these rules and the well-formed names of
``scheduler.model.generic_inventory``, raising ``InvalidField``.

``demands(spec, flavor_resources)`` is what the planner places per
instance: a request without groups is the one compute group ``'compute'``
of its flavor; a compute group without ``resources`` takes the flavor's.
"""

import dataclasses

from scheduler import exception
from scheduler.model import generic_inventory

COMPUTE = 'compute'
POLICIES = ('same', 'different')
#: a locality key: 'rack', 'row', 'availability_zone', 'host' ...
SCOPE_PATTERN = r'^[a-z][a-z0-9_.-]*$'


@dataclasses.dataclass(frozen=True)
class GroupDemand:
    """One group of one instance, ready for the planner."""

    name: str
    kind: str
    resources: dict
    required: tuple = ()
    forbidden: tuple = ()
    any_of: tuple = ()    # tuple of tuples of traits

    @property
    def is_compute(self):
        return self.kind == COMPUTE


def has_groups(spec):
    return bool(spec.get('resource_groups'))


def demands(spec, flavor_resources):
    """The GroupDemands of one instance of ``spec``."""
    groups = spec.get('resource_groups') or []
    if not groups:
        return [GroupDemand(COMPUTE, COMPUTE, dict(flavor_resources))]
    return [GroupDemand(
        name=g.name, kind=g.kind,
        resources=dict(g.resources) or (
            dict(flavor_resources) if g.kind == COMPUTE else {}),
        required=tuple(g.required_traits),
        forbidden=tuple(g.forbidden_traits),
        any_of=tuple(tuple(t) for t in g.any_traits)) for g in groups]


def group_problem(group):
    """A non-compute group without resources; a trait both required and
    forbidden."""
    if not group.get('resources') and group.get('kind', COMPUTE) != COMPUTE:
        return ['resources'], 'a %s group must ask for resources' % (
            group.get('kind'),)
    both = set(group.get('required_traits') or ()) & set(
        group.get('forbidden_traits') or ())
    if both:
        return ['forbidden_traits'], '%s both required and forbidden' % (
            sorted(both)[0],)
    return None


def duplicate_name(groups):
    seen = set()
    for index, group in enumerate(groups):
        name = group.get('name')
        if not name or name in seen:
            return [index, 'name'], ('group names are non-empty and '
                                     'unique, got %r' % (name,))
        seen.add(name)
    return None


def compute_groups_problem(groups):
    if sum(1 for g in groups if g.get('kind', COMPUTE) == COMPUTE) > 1:
        return [], 'at most one group of kind compute (the instance)'
    return None


def locality_problem(spec):
    names = [g.get('name') for g in spec.get('resource_groups') or ()]
    for index, rule in enumerate(spec.get('locality') or ()):
        groups = list(rule.get('groups') or ())
        path = ['locality', index, 'groups']
        if len(set(groups)) < 2:
            return path, ('a rule relates at least two groups, got %r' %
                          (groups,))
        for name in groups:
            if name not in names:
                return path, ('no resource group %r (groups: %s)' % (
                    name, ', '.join(map(str, names)) or 'none'))
    return None


def claims_nothing(spec):
    """A request without groups whose flavor asks for no resource."""
    if spec.get('resource_groups'):
        # the flavor may be empty (a volume alone)
        return False
    flavor = spec.get('flavor') or {}
    if any(k.startswith('resources') for k in flavor.get('extra_specs')
           or {}):
        return False
    return not any(flavor.get(key) for key in (
        'vcpus', 'memory_mb', 'root_gb', 'ephemeral_gb', 'swap'))


def _raise(problem, path):
    if problem:
        field = path + ''.join('[%d]' % p if isinstance(p, int) else
                               '.%s' % p for p in problem[0])
        raise exception.InvalidField(field=field, reason=problem[1])


def validate(spec, path='spec_obj'):
    """The client's check (see module doc): InvalidField for the first
    bad group or rule of RequestSpec ``spec``."""
    groups = spec.get('resource_groups') or []
    for index, group in enumerate(groups):
        at = '%s.resource_groups[%d]' % (path, index)
        group.obj_complete(at)
        generic_inventory.check_kind(group.kind, at + '.kind')
        for rc, amount in group.resources.items():
            generic_inventory.check_resource_class(
                rc, '%s.resources.%s' % (at, rc))
            if amount <= 0:
                raise exception.InvalidField(
                    field='%s.resources.%s' % (at, rc),
                    reason='must be positive, got %r' % (amount,))
        for key in ('required_traits', 'forbidden_traits'):
            for i, trait in enumerate(getattr(group, key)):
                generic_inventory.check_trait(trait, '%s.%s[%d]' % (
                    at, key, i))
        _raise(group_problem(group), at)
    _raise(duplicate_name(groups), path + '.resource_groups')
    _raise(compute_groups_problem(groups), path + '.resource_groups')
    for index, rule in enumerate(spec.get('locality') or []):
        rule.obj_complete('%s.locality[%d]' % (path, index))
    _raise(locality_problem(spec), path)
