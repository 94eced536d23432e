"""Filters that let aggregate metadata reserve hosts for some requests.

* AggregateMultiTenancyIsolation: a host in aggregates with
  ``filter_tenant_id`` keys (``filter_tenant_id``, ``filter_tenant_id2``
  ...; comma-separated project ids) only takes requests of those projects.
* AggregateTenantAffinityFilter: the other way round (nova's ``[scheduler]
  limit_tenants_to_placement_aggregate``): a project named by a
  ``filter_tenant_id*`` key of some aggregates (the whole value) lands
  only on the hosts of those aggregates; a project no aggregate names
  lands anywhere, or nowhere with ``[filter_scheduler]
  aggregate_required_for_tenants``.
* AggregateTypeAffinityFilter: a host in aggregates with an
  ``instance_type`` key (comma-separated flavor names) only takes those
  flavors.
* AggregateImagePropertiesIsolation: for each image property the request
  carries, a host whose aggregates set the same key (optionally under
  ``[filter_scheduler] aggregate_image_properties_isolation_namespace``)
  must list the image's value among theirs.
* AggregateInstanceExtraSpecsFilter: every flavor extra spec scoped
  ``aggregate_instance_extra_specs:`` (or unscoped) must be matched by the
  metadata of the host's aggregates, with the extra-spec operators.

Hosts in no aggregate carrying the key pass (except for extra specs, where
a requirement with nothing to match fails, as in nova). All are vectorized:
they visit only the aggregates carrying a key and their member rows.
"""

import numpy as np

from scheduler.filters import base
from scheduler.filters import extra_specs_ops

_EXTRA_SPECS_SCOPE = 'aggregate_instance_extra_specs'


def _split(value):
    return {v.strip() for v in value.split(',') if v.strip()}


def _restricted_hosts(table, matches_key):
    """host -> union of allowed values over its aggregates with the key."""
    allowed = {}
    for agg in table.aggregates.by_uuid.values():
        values = set()
        for key, value in agg['metadata'].items():
            if matches_key(key):
                values |= _split(value)
        if values:
            for host in agg['hosts']:
                allowed.setdefault(host, set()).update(values)
    return allowed


def _mask_excluding(table, allowed, wanted):
    mask = np.ones(table.size, dtype=bool)
    for host, values in allowed.items():
        if wanted not in values:
            mask[table.rows_of_host(host)] = False
    return mask


class AggregateMultiTenancyIsolation(base.BaseFilter):

    def filter_all(self, table, request):
        allowed = _restricted_hosts(
            table, lambda k: k.startswith('filter_tenant_id'))
        return _mask_excluding(table, allowed, request.spec.get('project_id'))

    def explain(self, table, request, removed_rows):
        return 'reserved for other projects'


class AggregateTenantAffinityFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.required = conf.filter_scheduler.aggregate_required_for_tenants

    def filter_all(self, table, request):
        project = request.spec.get('project_id')
        named = [agg for agg in table.aggregates.by_uuid.values()
                 if any(key.startswith('filter_tenant_id') and
                        value == project
                        for key, value in agg['metadata'].items())]
        if not named:
            return np.full(table.size, not self.required, dtype=bool)
        mask = np.zeros(table.size, dtype=bool)
        for agg in named:
            for host in agg['hosts']:
                mask[table.rows_of_host(host)] = True
        return mask

    def explain(self, table, request, removed_rows):
        return 'not in an aggregate of the project'


class AggregateTypeAffinityFilter(base.BaseFilter):

    def filter_all(self, table, request):
        allowed = _restricted_hosts(table, lambda k: k == 'instance_type')
        return _mask_excluding(table, allowed,
                               request.spec.flavor.get('name'))

    def explain(self, table, request, removed_rows):
        return 'reserved for other flavors'


class AggregateImagePropertiesIsolation(base.BaseFilter):

    judges_image = True

    def __init__(self, conf):
        super().__init__(conf)
        options = conf.filter_scheduler
        self.namespace = \
            options.aggregate_image_properties_isolation_namespace
        self.separator = \
            options.aggregate_image_properties_isolation_separator

    def _property(self, key):
        if not self.namespace:
            return key
        prefix = self.namespace + self.separator
        return key[len(prefix):] if key.startswith(prefix) else None

    def filter_all(self, table, request):
        image = request.spec.get('image')
        properties = image.get('properties', {}) if image else {}
        mask = np.ones(table.size, dtype=bool)
        if not properties:
            return mask
        # (host, property) -> union of the values its aggregates allow
        allowed = {}
        for agg in table.aggregates.by_uuid.values():
            for key, value in agg['metadata'].items():
                name = self._property(key)
                if name and properties.get(name) is not None:
                    for host in agg['hosts']:
                        allowed.setdefault((host, name), set()).update(
                            _split(value))
        for (host, name), values in allowed.items():
            if properties[name] not in values:
                mask[table.rows_of_host(host)] = False
        return mask

    def explain(self, table, request, removed_rows):
        return 'aggregate metadata isolates other image properties'


class AggregateInstanceExtraSpecsFilter(base.BaseFilter):

    @staticmethod
    def _requirements(request):
        """[(key, requirement)]: a list, not a dict, because a scoped and
        an unscoped spec may name the same key and both must hold."""
        specs = request.spec.flavor.get('extra_specs', {})
        wanted = []
        for key, value in sorted(specs.items()):
            scope, _, name = key.partition(':')
            if not name:
                name, scope = scope, None
            if scope not in (None, _EXTRA_SPECS_SCOPE):
                continue
            wanted.append((name, extra_specs_ops.parse(value)))
        return wanted

    def filter_all(self, table, request):
        wanted = self._requirements(request)
        if not wanted:
            return np.ones(table.size, dtype=bool)
        # once per distinct set of aggregates, not per host
        group_of_row, groups = table.aggregates.row_groups(table)
        passes = np.array([self._aggregates_match(aggs, wanted)
                           for aggs in groups], dtype=bool)
        return passes[group_of_row]

    @staticmethod
    def _aggregates_match(aggregates, wanted):
        for key, requirement in wanted:
            values = set()
            for agg in aggregates:
                if key in agg['metadata']:
                    values |= _split(agg['metadata'][key])
            if not any(requirement.matches(v) for v in values):
                return False
        return True

    def explain(self, table, request, removed_rows):
        return 'aggregate metadata does not match the flavor extra specs'
