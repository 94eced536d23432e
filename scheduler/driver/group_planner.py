"""GroupPlanner: one provider per resource group of each instance.

Used by ``FilterScheduler`` for a RequestSpec with ``resource_groups``
(``scheduler.model.resource_groups``); phase two (the claim) is the driver's:
every group of every instance of the request is one ``claims.Claim`` of
the same transaction, so a request gets all its providers or none, and
``delete_allocations(instance)`` releases them all.

Per request, once, whole-column work over the host table:

* candidates of a group: providers of its ``kind`` with its traits
  (``scheduler.host_state.labels``); the compute group then goes through
  the configured filters like any request, the others only lose disabled
  providers.

Per instance:

* the candidates where the group's resources fit (``scheduler.model.fit``, the
  one rule; this request's earlier choices are assumed claims already);
* hard 'same' rules keep, in every group they relate, only the providers
  whose locality value has a fitting provider in each other group of the
  rule (so the first choice never strands a later group);
* groups are then chosen most constrained first; a group keeps the
  candidates that satisfy the hard rules with the groups already chosen,
  and soft rules add ``locality_weight_multiplier`` to the weight of the
  candidates that satisfy them (half of it for a 'same' rule a group
  still to choose could keep there); the random pick among the best
  ``host_subset_size`` only takes candidates that keep as many soft
  rules as the best one. The compute group is weighed by the
  configured weighers, the others by their free share of what they ask
  (spreading); the pick is random among the best ``host_subset_size``.

A missing locality value (-1) is never 'same' as anything and always
'different'.
"""

import numpy as np

from scheduler.db import claims
from scheduler.model import fit
from scheduler import objects
from scheduler.driver.diagnosis import Diagnosis
from scheduler.weighers.base import normalize


class GroupPlanner:

    def __init__(self, driver, locality_multiplier):
        self.driver = driver
        self.multiplier = locality_multiplier

    # -- per request ------------------------------------------------------

    def candidates(self, table, request):
        """Group name -> candidate rows; NoValidHost naming the first
        group with none."""
        out = {}
        for group in request.groups:
            diagnosis = Diagnosis(table.size)
            diagnosis.note = 'resource group %r' % group.name
            mask = _label_mask(table, group, diagnosis)
            if group.is_compute:
                rows = self.driver.filter(table, request, diagnosis,
                                           within=mask)
            else:
                disabled = mask & table.disabled[:table.size]
                _step(diagnosis, 'ProviderDisabled', mask, disabled, None)
                rows = np.flatnonzero(mask & ~disabled)
                if not len(rows):
                    self.driver.no_valid_host(request, diagnosis)
            out[group.name] = rows
        return out

    # -- per instance -----------------------------------------------------

    def place(self, table, request, rows_by_group, consumer,
              return_alternates, plan, key):
        fitting = {g.name: rows_by_group[g.name][fit.fits_all(
            table, g.resources, rows_by_group[g.name])]
            for g in request.groups}
        primary = _primary(request)
        if primary.is_compute:
            fitting[primary.name] = _group_rule(request, table,
                                                fitting[primary.name])
        self._consistent(table, request, fitting)
        for group in request.groups:
            if not len(fitting[group.name]):
                self._none_fit(table, request, group, plan,
                               len(rows_by_group[group.name]))
        chosen, weights = {}, {}
        for group in sorted(request.groups,
                            key=lambda g: len(fitting[g.name])):
            row, weight = self._choose(table, request, group, fitting,
                                       chosen, plan)
            chosen[group.name], weights[group.name] = row, weight
            self.driver.assumed.assume(key, row, dict(group.resources))
            if group.is_compute and request.group is not None:
                request.group.placed(table.hosts[row])
            plan.claims.append(claims.Claim(
                consumer, int(table.provider_id[row]),
                dict(group.resources),
                host=table.hosts[row] if group.is_compute else None))
            plan.rows.append(row)
        selections = [_selection(table, primary, chosen, consumer, False,
                                 weights[primary.name])]
        if return_alternates:
            selections += self._alternates(table, request, primary,
                                           fitting[primary.name], chosen,
                                           consumer)
        plan.selections.append(selections)

    def _choose(self, table, request, group, fitting, chosen, plan):
        rows = _allowed(table, request, group, fitting[group.name], chosen)
        rows = rows[fit.fits_all(table, group.resources, rows)]
        if not len(rows):
            self._none_fit(table, request, group, plan,
                           len(fitting[group.name]))
        soft = _soft_matches(table, request, group, rows, chosen, fitting)
        order, weights = self._rank(table, request, group, rows, soft,
                                    self.driver.host_subset_size)
        # the random pick among the best never gives up a soft rule the
        # best one keeps
        soft = soft[order]
        eligible = np.flatnonzero(soft == soft[0])
        pick = int(eligible[self.driver.rng.integers(len(eligible))])
        return int(rows[order[pick]]), float(weights[pick])

    def _alternates(self, table, request, primary, rows, chosen,
                    consumer):
        others = {k: v for k, v in chosen.items() if k != primary.name}
        rows = _allowed(table, request, primary, rows, others)
        rows = rows[(rows != chosen[primary.name])
                    & fit.fits_all(table, primary.resources, rows)]
        if primary.is_compute:
            rows = _group_rule(request, table, rows)
        if not len(rows):
            return []
        wanted = self.driver.max_attempts - 1
        order, weights = self._rank(
            table, request, primary, rows,
            _soft_matches(table, request, primary, rows, others), wanted)
        ranked = rows[order]
        return [_selection(table, primary, dict(others, **{
            primary.name: int(row)}), consumer, True, weight)
            for row, weight in zip(ranked[:wanted], weights)]

    def _rank(self, table, request, group, rows, soft, wanted):
        """Positions in ``rows`` of the ``wanted`` best, best first, and
        their weights; ``soft``: the soft rules each row keeps."""
        if group.is_compute:
            total = self.driver.weigh(table, rows, request)
        else:
            total = normalize(_free_share(table, group, rows))
        total = total + self.multiplier * soft
        return self.driver.top(np.arange(len(rows)), total, wanted)

    def _consistent(self, table, request, fitting):
        """Hard 'same' rules: keep the providers whose scope value has
        room in every group of the rule; a rule runs again only when
        another one shrank one of its groups (rules may chain)."""
        rules = [r for r in request.locality
                 if r.hard and r.policy == 'same']
        todo = list(rules)
        for _ in range(3 * len(rules)):
            if not todo:
                return
            rule = todo.pop(0)
            shrunk = _keep_common(table, rule, fitting)
            todo += [r for r in rules if r is not rule and r not in todo
                     and shrunk & set(r.groups)]

    def _none_fit(self, table, request, group, plan, candidates):
        """NoValidHost: none of the group's ``candidates`` providers
        (of its kind and traits, past the filters) has room for it."""
        diagnosis = Diagnosis(candidates)
        diagnosis.add('GroupPlacement', candidates, candidates, [],
                      'resource group %r: %s' % (group.name, ', '.join(
                          '%s %d' % item for item in sorted(
                              group.resources.items()))))
        rules = [r.scope for r in request.locality
                 if r.hard and group.name in r.groups]
        note = 'no provider of kind %s fits resource group %r' % (
            group.kind, group.name)
        if rules:
            note += ' within the hard locality rules (%s)' % ', '.join(
                sorted(set(rules)))
        if plan.claims:
            note += '; %d claims of this request planned, none placed' % (
                len(plan.claims))
        self.driver.no_valid_host(request, diagnosis, note=note)


def scope_column(table, scope):
    """Value ids of locality ``scope`` per row (-1: none) and how many
    ids there are: the zone column for 'availability_zone' (aggregates
    may set it), the labels otherwise."""
    if scope == 'availability_zone':
        return table.az[:table.size], len(table.az_names)
    return (table.labels.locality(scope, table.size),
            table.labels.value_count(scope))


def _keep_common(table, rule, fitting):
    """Keep in each group of ``rule`` the rows whose scope value every
    group of the rule has; the names of the groups that lost rows."""
    column, count = scope_column(table, rule.scope)
    common = np.ones(count + 1, dtype=bool)
    for name in rule.groups:
        common &= _present(column, fitting[name], count)
    shrunk = set()
    for name in rule.groups:
        kept = fitting[name][common[column[fitting[name]] + 1]]
        if len(kept) != len(fitting[name]):
            shrunk.add(name)
        fitting[name] = kept
    return shrunk


def _present(column, rows, count):
    """Mask over value id + 1: the values some of ``rows`` have (a
    bincount, not a sort: O(rows))."""
    present = np.zeros(count + 1, dtype=bool)
    present[column[rows] + 1] = True
    present[0] = False
    return present


def _primary(request):
    """The group whose provider the Selection's host names: the compute
    group, else the first."""
    for group in request.groups:
        if group.is_compute:
            return group
    return request.groups[0]


def _label_mask(table, group, diagnosis):
    labels, size = table.labels, table.size
    everything = np.ones(size, dtype=bool)
    mask = labels.of_kind(group.kind, size)
    _step(diagnosis, 'ProviderKind', everything, ~mask,
          'not %s' % group.kind)
    traits = np.ones(size, dtype=bool)
    for trait in group.required:
        traits &= labels.has_trait(trait, size)
    for trait in group.forbidden:
        traits &= ~labels.has_trait(trait, size)
    for options in group.any_of:
        some = np.zeros(size, dtype=bool)
        for trait in options:
            some |= labels.has_trait(trait, size)
        traits &= some
    _step(diagnosis, 'ProviderTraits', mask, mask & ~traits, 'traits')
    return mask & traits


def _step(diagnosis, name, before, removed, detail):
    out = int(np.count_nonzero(removed))
    diagnosis.add(name, int(np.count_nonzero(before)), out, [],
                  detail if out else None)


def _allowed(table, request, group, rows, chosen):
    """``rows`` of ``group`` that keep its hard rules with ``chosen``."""
    for rule in request.locality:
        if not rule.hard or group.name not in rule.groups:
            continue
        column, _ = scope_column(table, rule.scope)
        for other in rule.groups:
            if other == group.name or other not in chosen:
                continue
            same = _same_as(column, rows, chosen[other])
            rows = rows[same if rule.policy == 'same' else ~same]
    return rows


def _soft_matches(table, request, group, rows, chosen, fitting=None):
    """How many soft rules each row keeps with the groups ``chosen``;
    half a rule for a 'same' rule a group still to choose could keep
    (its ``fitting`` rows have the row's value), so the first choice
    leaves room to keep the rule."""
    matches = np.zeros(len(rows), dtype=np.float64)
    for rule in request.locality:
        if rule.hard or group.name not in rule.groups:
            continue
        column, count = scope_column(table, rule.scope)
        for other in rule.groups:
            if other == group.name:
                continue
            if other in chosen:
                same = _same_as(column, rows, chosen[other])
                matches += same if rule.policy == 'same' else ~same
            elif fitting is not None and rule.policy == 'same':
                present = _present(column, fitting[other], count)
                matches += 0.5 * present[column[rows] + 1]
    return matches


def _same_as(column, rows, row):
    value = column[row]
    if value < 0:
        return np.zeros(len(rows), dtype=bool)
    return column[rows] == value


def _free_share(table, group, rows):
    share = np.zeros(len(rows), dtype=np.float64)
    for rc in group.resources:
        columns = table.resources[rc]
        share += table.free(rc, rows) / np.maximum(columns.capacity[rows], 1)
    return share


def _group_rule(request, table, rows):
    """The rows the request's server group allows (hard policies)."""
    if request.group is None or not len(rows):
        return rows
    return rows[request.group.allows(table, rows)]


def _selection(table, primary, chosen, consumer, is_alternate, weight):
    row = chosen[primary.name]
    limits = {rc: int(table.resources[rc].capacity[row])
              for rc in primary.resources if rc in table.resources}
    return objects.Selection.build(
        host=table.hosts[row], nodename=table.nodenames[row],
        compute_node_uuid=table.uuids[row], instance_uuid=consumer,
        allocation_id=None if is_alternate else consumer,
        allocation={} if is_alternate else dict(primary.resources),
        limits=limits, weight=float(weight), is_alternate=is_alternate,
        providers={name: [table.hosts[r], table.nodenames[r],
                          table.uuids[r]] for name, r in chosen.items()})
