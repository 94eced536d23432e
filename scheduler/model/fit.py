"""The fit rule: does ``amount`` of a resource class fit an inventory?

One rule, read by the ResourceFitFilter, the driver (each instance of a
request and its alternates) and the claim's SQL re-check, so the planner
never offers what the claim refuses, nor the reverse:

* usage is the larger of the tracker's report and the claims held, and
  ``usage + amount <= capacity`` (``capacity`` = ``(total - reserved) *
  allocation_ratio``, rounded down, kept per inventory);
* ``min_unit <= amount <= max_unit``;
* ``amount`` is a multiple of ``step_size``.

Three forms of the same rule: ``column_fits`` over a HostTable's numpy
columns, ``row_fits`` for one database row, ``sql_fits`` as a SQL
predicate over the ``inventories`` table. Capacity itself is derived
by ``scheduler.model.generic_inventory.capacity``.
"""

import numpy as np
import sqlalchemy as sa


def _units_ok(min_unit, max_unit, step_size, amount):
    return ((min_unit <= amount) & (max_unit >= amount)
            & (amount % np.maximum(step_size, 1) == 0))


def column_fits(table, rc, amount, rows=None):
    """Boolean mask: where ``amount`` of ``rc`` fits (all rows or
    ``rows``); tentative claims of the worker count as usage."""
    columns = table.resources.get(rc)
    if columns is None:
        n = table.size if rows is None else len(rows)
        return np.zeros(n, dtype=bool)
    sl = slice(0, table.size) if rows is None else rows
    mask = ((table.free(rc, rows) >= amount)
            & (columns.min_unit[sl] <= amount)
            & (columns.max_unit[sl] >= amount))
    if amount != 1 and columns.stepped:
        # a modulo over every row only where some inventory has a step
        mask &= amount % np.maximum(columns.step_size[sl], 1) == 0
    return mask


def fits_all(table, resources, rows=None):
    """Mask of the rows where every class of ``resources`` fits."""
    if rows is not None and rows is table.every_row():
        rows = None  # whole columns: the same mask without gathers
    n = table.size if rows is None else len(rows)
    mask = np.ones(n, dtype=bool)
    for rc, amount in resources.items():
        mask &= column_fits(table, rc, amount, rows)
    return mask


def row_fits(row, amount):
    """The rule for one inventory row (any object with its columns)."""
    used = max(row.reported_used, row.claimed)
    return bool(used + amount <= row.capacity and _units_ok(
        row.min_unit, row.max_unit, row.step_size, amount))


def sql_fits(inv, amount, units=None):
    """The rule as a SQL predicate on table ``inv``; ``amount`` may be a
    SQL expression (one amount per row). When ``amount`` sums several
    allocations (instances of one request on one provider), ``units`` is
    ``(smallest, largest, gcd)`` of them: the unit rules hold for each
    allocation, the capacity rule for the sum."""
    smallest, largest, common = units or (amount, amount, amount)
    return sa.and_(inv.c.claimed + amount <= inv.c.capacity,
                   inv.c.reported_used + amount <= inv.c.capacity,
                   inv.c.min_unit <= smallest, inv.c.max_unit >= largest,
                   common % sa.case((inv.c.step_size > 1, inv.c.step_size),
                                    else_=1) == 0)
