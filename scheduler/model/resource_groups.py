"""What each resource group of a request asks for, validated once.

``validate(spec, path)`` checks ``RequestSpec.resource_groups`` and
``RequestSpec.locality`` and raises ``InvalidField`` naming the first
bad field:

* group names are unique, non-empty; at most one group is of kind
  ``'compute'`` (it is the instance itself);
* resource classes and traits are well-formed names
  (``scheduler.model.generic_inventory``), amounts are positive, every
  inner list of ``any_traits`` has at least one trait, and no trait is both
  required and forbidden;
* a locality rule names at least two known groups, a ``scope`` that is a
  locality key ('rack', 'row', 'availability_zone', 'host', ...) and a
  ``policy`` of 'same' or 'different'.

``demands(spec, flavor_resources)`` is what the planner places per
instance: a request without groups is the one compute group ``'compute'``
of its flavor; a compute group without ``resources`` takes the flavor's.
"""

import dataclasses
import re

from scheduler import exception
from scheduler.model import generic_inventory

COMPUTE = 'compute'
POLICIES = ('same', 'different')
_SCOPE = re.compile(r'^[a-z][a-z0-9_.-]*$')


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


def validate(spec, path='spec_obj'):
    """Raise InvalidField for the first bad group or rule of ``spec``."""
    names = []
    for index, group in enumerate(spec.get('resource_groups') or []):
        _check_group(group, '%s.resource_groups[%d]' % (path, index), names)
        names.append(group.name)
    if sum(1 for g in spec.get('resource_groups') or []
           if g.kind == COMPUTE) > 1:
        raise exception.InvalidField(
            field=path + '.resource_groups',
            reason='at most one group of kind compute (the instance)')
    for index, rule in enumerate(spec.get('locality') or []):
        _check_rule(rule, '%s.locality[%d]' % (path, index), names)


def _check_group(group, path, seen):
    group.obj_complete(path)
    if not group.name or group.name in seen:
        raise exception.InvalidField(
            field=path + '.name', reason='group names are non-empty and '
            'unique, got %r' % (group.name,))
    generic_inventory.check_kind(group.kind, path + '.kind')
    for rc, amount in group.resources.items():
        generic_inventory.check_resource_class(rc, '%s.resources.%s' %
                                             (path, rc))
        if amount <= 0:
            raise exception.InvalidField(
                field='%s.resources.%s' % (path, rc),
                reason='must be positive, got %r' % (amount,))
    if not group.resources and group.kind != COMPUTE:
        raise exception.InvalidField(
            field=path + '.resources',
            reason='a %s group must ask for resources' % group.kind)
    for key in ('required_traits', 'forbidden_traits'):
        for i, trait in enumerate(getattr(group, key)):
            generic_inventory.check_trait(trait, '%s.%s[%d]' % (path, key, i))
    for i, options in enumerate(group.any_traits):
        if not options:
            raise exception.InvalidField(
                field='%s.any_traits[%d]' % (path, i),
                reason='needs at least one trait')
        for j, trait in enumerate(options):
            generic_inventory.check_trait(
                trait, '%s.any_traits[%d][%d]' % (path, i, j))
    both = set(group.required_traits) & set(group.forbidden_traits)
    if both:
        raise exception.InvalidField(
            field=path + '.forbidden_traits',
            reason='%s both required and forbidden' % sorted(both)[0])


def _check_rule(rule, path, names):
    rule.obj_complete(path)
    if len(set(rule.groups)) < 2:
        raise exception.InvalidField(
            field=path + '.groups', reason='a rule relates at least two '
            'groups, got %r' % (list(rule.groups),))
    for name in rule.groups:
        if name not in names:
            raise exception.InvalidField(
                field=path + '.groups', reason='no resource group %r '
                '(groups: %s)' % (name, ', '.join(names) or 'none'))
    if not _SCOPE.match(rule.scope or ''):
        raise exception.InvalidField(
            field=path + '.scope', reason='a locality key (rack, row, '
            'availability_zone, host ...), got %r' % (rule.scope,))
    if rule.policy not in POLICIES:
        raise exception.InvalidField(
            field=path + '.policy', reason='expected same or different, '
            'got %r' % (rule.policy,))
