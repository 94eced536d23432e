"""Effective allocation ratios: the tracker's, or the aggregates' if enabled.

The ratio is the tracker's (``inventories.reported_ratio``), as in Nova
34. With ``[scheduler] aggregate_allocation_ratios`` (the database's
``aggregate_allocation_ratios``), an aggregate whose metadata sets
``cpu_allocation_ratio``, ``ram_allocation_ratio`` or
``disk_allocation_ratio`` imposes that ratio on its hosts (the smallest
one when several aggregates of a host set it); ``overrides`` is the one
place that decides, for reports and aggregate changes alike.
A stored ratio that is not a finite positive number is ignored (the RPC
edge refuses one; metadata stored before it did may hold one).
The effective ratio is written to ``inventories.allocation_ratio`` and
``capacity`` in the database, because the claim transaction re-checks
capacity in SQL: planner and claim must agree on it.
"""

import json
import math

import sqlalchemy as sa

from scheduler.model import generic_inventory
from scheduler.model import resource_classes as rcs
from scheduler.db import models

AGG = models.aggregates
INV = models.inventories
P = models.providers

RATIO_KEYS = {rcs.VCPU: 'cpu_allocation_ratio',
              rcs.MEMORY_MB: 'ram_allocation_ratio',
              rcs.DISK_GB: 'disk_allocation_ratio'}


def has_ratio(metadata):
    return any(key in metadata for key in RATIO_KEYS.values())


def overrides(db, session, hosts):
    """host -> {resource class: ratio} that replace the trackers' ratios:
    none unless the database's ``aggregate_allocation_ratios`` is set."""
    if not db.aggregate_allocation_ratios:
        return {}
    return aggregate_ratios(session, hosts)


def aggregate_ratios(session, hosts):
    """host -> {resource class: ratio} imposed by aggregates."""
    hosts = set(hosts)
    found = {}
    rows = session.execute(sa.select(AGG.c.metadata_json, AGG.c.hosts_json)
                           .where(AGG.c.deleted == sa.false(),
                                  AGG.c.metadata_json.like(
                                      '%allocation_ratio%'))).all()
    for metadata_json, hosts_json in rows:
        metadata = json.loads(metadata_json)
        members = hosts & set(json.loads(hosts_json))
        for rc, key in RATIO_KEYS.items():
            try:
                ratio = float(metadata[key])
            except (KeyError, TypeError, ValueError):
                continue
            # metadata stored before the edge bounded ratios may be 'inf'
            if not math.isfinite(ratio) or ratio <= 0:
                continue
            for host in members:
                current = found.setdefault(host, {}).get(rc)
                found[host][rc] = ratio if current is None else min(
                    current, ratio)
    return found


def apply_overrides(inventories, overrides):
    """Set allocation_ratio/capacity of inventory dicts from overrides."""
    for rc, inv in inventories.items():
        ratio = overrides.get(rc, inv['reported_ratio'])
        inv['allocation_ratio'] = float(ratio)
        inv['capacity'] = generic_inventory.capacity(
            inv['total'], inv['reserved'], ratio)
    return inventories


def recompute_hosts(db, change, hosts):
    """Re-derive ratios and capacities of every provider on ``hosts``
    within write ``change`` (``scheduler.db.changes``) after their
    aggregates changed; nothing to do unless aggregates set ratios.

    Locks the providers first (``Change.lock_providers``); returns their ids
    so the caller records them as changed.
    """
    if not hosts or not db.aggregate_allocation_ratios:
        return []
    session = change.session
    providers = session.execute(sa.select(P.c.id, P.c.host).where(
        P.c.host.in_(sorted(hosts))).order_by(P.c.id)).all()
    change.lock_providers([provider_id for provider_id, _ in providers])
    imposed = aggregate_ratios(session, hosts)
    host_of = dict(providers)
    rows = session.execute(sa.select(INV).where(
        INV.c.provider_id.in_(list(host_of)),
        INV.c.resource_class.in_(list(RATIO_KEYS)))).all()
    for row in rows:
        ratio = imposed.get(host_of[row.provider_id], {}).get(
            row.resource_class, row.reported_ratio)
        new_capacity = generic_inventory.capacity(row.total, row.reserved,
                                                  ratio)
        if (new_capacity, ratio) != (row.capacity, row.allocation_ratio):
            session.execute(sa.update(INV).where(INV.c.id == row.id).values(
                allocation_ratio=ratio, capacity=new_capacity))
    return list(host_of)
