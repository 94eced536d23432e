"""Filters on traits: what a flavor and an image ask for, and aggregates
kept for the requests that ask for theirs.

The traits of a request are nova's syntax, which nova-scheduler turns
into a Placement query: ``trait:<NAME>`` set to ``required`` or
``forbidden`` in the flavor's extra specs or the image's properties (the
flavor's word wins where both name a trait); nova's image metadata
object carries the image's required ones as ``traits_required`` (a list,
or its JSON text). A host's traits are those
of its report (for the Placement feed, every trait of the provider
tree).

* TraitsFilter: a host has every required trait and no forbidden one.
* AggregateRequiredTraitsIsolation: a host in an aggregate whose metadata
  sets ``trait:<NAME>=required`` only takes requests that require every
  such trait of that aggregate (nova's ``[scheduler]
  enable_isolated_aggregate_filtering``); hosts in no such aggregate take
  any request.

Both are vectorized: one boolean column per trait named, and only the
aggregates carrying such keys are visited. A trait name is checked as
any trait the scheduler accepts (``CUSTOM_*`` or os-traits'): a
malformed one is an ``InvalidField`` naming where it came from.
"""

import json

import numpy as np

from scheduler import exception
from scheduler.filters import base
from scheduler.model import generic_inventory

PREFIX = 'trait:'
REQUIRED = 'required'
FORBIDDEN = 'forbidden'
#: nova's ImageMetaProps field of the image's required traits
IMAGE_REQUIRED = 'traits_required'


def requested_traits(spec):
    """``(required, forbidden)`` frozensets of ``spec``'s flavor extra
    specs and image properties (module docstring)."""
    wanted = {}
    image = spec.get('image')
    properties = (image.get('properties') if image is not None else
                  None) or {}
    listed = properties.get(IMAGE_REQUIRED) or []
    if isinstance(listed, str):
        try:
            listed = json.loads(listed)
        except ValueError:
            listed = None
    if not isinstance(listed, list):
        raise exception.InvalidField(
            field='image.properties.' + IMAGE_REQUIRED,
            reason='expected a list of trait names')
    for index, name in enumerate(listed):
        generic_inventory.check_trait(
            name, 'image.properties.%s[%d]' % (IMAGE_REQUIRED, index))
        wanted[name] = REQUIRED
    sources = (('image.properties', properties),
               ('flavor.extra_specs', spec.flavor.get('extra_specs')))
    for where, values in sources:
        for key, value in (values or {}).items():
            if not key.startswith(PREFIX) or value not in (REQUIRED,
                                                           FORBIDDEN):
                continue
            name = key[len(PREFIX):]
            generic_inventory.check_trait(name, '%s.%s' % (where, key))
            wanted[name] = value
    return (frozenset(t for t, v in wanted.items() if v == REQUIRED),
            frozenset(t for t, v in wanted.items() if v == FORBIDDEN))


def _wanted(request):
    return request.derived('traits.requested',
                           lambda: requested_traits(request.spec))


class TraitsFilter(base.BaseFilter):

    def applies_to(self, request):
        required, forbidden = _wanted(request)
        return bool(required or forbidden)

    def check_request(self, request):
        _wanted(request)

    def filter_all(self, table, request):
        required, forbidden = _wanted(request)
        size = table.size
        mask = np.ones(size, dtype=bool)
        for trait in required:
            mask &= table.labels.has_trait(trait, size)
        for trait in forbidden:
            mask &= ~table.labels.has_trait(trait, size)
        return mask

    def explain(self, table, request, removed_rows):
        required, forbidden = _wanted(request)
        return 'traits: required %s, forbidden %s' % (
            ','.join(sorted(required)) or '-',
            ','.join(sorted(forbidden)) or '-')


class AggregateRequiredTraitsIsolation(base.BaseFilter):

    def check_request(self, request):
        _wanted(request)

    def filter_all(self, table, request):
        required, _ = _wanted(request)
        mask = np.ones(table.size, dtype=bool)
        for agg in table.aggregates.by_uuid.values():
            kept_for = {key[len(PREFIX):] for key, value in
                        agg['metadata'].items()
                        if key.startswith(PREFIX) and value == REQUIRED}
            if kept_for and not kept_for <= required:
                for host in agg['hosts']:
                    mask[table.rows_of_host(host)] = False
        return mask

    def explain(self, table, request, removed_rows):
        return 'in an aggregate kept for requests requiring its traits'
