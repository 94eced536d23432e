"""What the scheduler database says, read from the test process.

``read_state(engine)`` snapshots providers, inventories and the sum of
allocations per provider and resource class in one transaction;
``overcommit(state)`` lists every broken capacity invariant and
``hosts_that_fit(state, resources)`` is the offline oracle: the enabled
hosts that could still take one instance of ``resources``.
"""

import dataclasses

import sqlalchemy as sa

from scheduler import objects
from scheduler.model import resource_classes
from scheduler.db import models
from tests import waiting

P = models.providers
INV = models.inventories
ALLOC = models.allocations


@dataclasses.dataclass
class Inventory:
    capacity: int
    reported_used: int
    claimed: int
    min_unit: int
    max_unit: int
    allocated: int = 0  # sum of the allocation rows

    def free(self):
        return self.capacity - max(self.reported_used, self.claimed)

    def fits(self, amount):
        return (self.min_unit <= amount <= self.max_unit
                and self.free() >= amount)


@dataclasses.dataclass
class Provider:
    id: int
    host: str
    nodename: str
    disabled: bool
    availability_zone: str
    inventories: dict

    def fits(self, resources):
        return all(rc in self.inventories
                   and self.inventories[rc].fits(amount)
                   for rc, amount in resources.items())


def resources_of(flavor):
    """Amount per resource class of one instance of ``flavor`` (a dict)."""
    return resource_classes.flavor_resources(objects.Flavor(**flavor))


# only columns of the first release's schema: the upgrade tests audit
# databases that a previous release's workers still use
_P_COLUMNS = ('id', 'host', 'nodename', 'disabled', 'availability_zone')
_INV_COLUMNS = ('provider_id', 'resource_class', 'capacity', 'reported_used',
                'claimed', 'min_unit', 'max_unit')


def _columns(table, names):
    return [table.c[name] for name in names]


def read_state(engine):
    """provider id -> Provider, with allocation sums, in one snapshot."""
    with engine.connect() as connection, connection.begin():
        if engine.dialect.name == 'sqlite':
            # its driver begins no transaction before a read: without one,
            # a provider written between two of the reads shows up in one
            connection.exec_driver_sql('BEGIN')
        providers = {
            r.id: Provider(r.id, r.host, r.nodename, bool(r.disabled),
                           r.availability_zone, {})
            for r in connection.execute(sa.select(*_columns(P, _P_COLUMNS)))}
        for r in connection.execute(sa.select(*_columns(INV, _INV_COLUMNS))):
            providers[r.provider_id].inventories[r.resource_class] = \
                Inventory(r.capacity, r.reported_used, r.claimed,
                          r.min_unit, r.max_unit)
        sums = connection.execute(
            sa.select(ALLOC.c.provider_id, ALLOC.c.resource_class,
                      sa.func.sum(ALLOC.c.amount))
            .group_by(ALLOC.c.provider_id, ALLOC.c.resource_class))
        for provider_id, rc, total in sums:
            inventory = providers[provider_id].inventories.get(rc)
            if inventory is None:
                inventory = providers[provider_id].inventories[rc] = \
                    Inventory(0, 0, 0, 0, 0)
            inventory.allocated = int(total)
    return providers


def overcommit(state):
    """Every provider/class whose claims break an invariant, as text."""
    problems = []
    for provider in state.values():
        for rc, inv in sorted(provider.inventories.items()):
            if inv.allocated > inv.capacity:
                problems.append('%s %s: allocations sum to %d > capacity '
                                '%d' % (provider.host, rc, inv.allocated,
                                        inv.capacity))
            if inv.claimed != inv.allocated:
                problems.append('%s %s: inventories.claimed is %d but '
                                'allocations sum to %d' % (
                                    provider.host, rc, inv.claimed,
                                    inv.allocated))
    return problems


def hosts_that_fit(state, resources):
    """Names of enabled hosts with room for one instance of resources."""
    return sorted(p.host for p in state.values()
                  if not p.disabled and p.fits(resources))


def allocations(engine, consumer_uuid=None):
    """Allocation rows joined with their provider's host, as dicts."""
    query = (sa.select(ALLOC, P.c.host, P.c.nodename)
             .join(P, P.c.id == ALLOC.c.provider_id)
             .order_by(ALLOC.c.id))
    if consumer_uuid is not None:
        query = query.where(ALLOC.c.consumer_uuid == consumer_uuid)
    with engine.connect() as connection:
        return [dict(r._mapping) for r in connection.execute(query)]


def provider_count(engine):
    with engine.connect() as connection:
        return connection.execute(
            sa.select(sa.func.count()).select_from(P)).scalar_one()


#: the one way a test waits (``tests.waiting``)
wait_for = waiting.wait_for
