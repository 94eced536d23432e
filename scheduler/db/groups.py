"""Server-group membership as the scheduler's claims recorded it.

Rows of ``group_members`` are written by ``scheduler.db.claims`` in the same
transaction as the claims (under the group's row lock), and removed when
the claims are released. ``member_hosts`` is what the planner reads.
"""

import collections

import sqlalchemy as sa

from scheduler.db import models

GM = models.group_members


def member_hosts(db, group_uuid, exclude_consumers=()):
    """Counter of host -> members of ``group_uuid`` placed there."""
    query = (sa.select(GM.c.host, sa.func.count())
             .where(GM.c.group_uuid == group_uuid).group_by(GM.c.host))
    if exclude_consumers:
        query = query.where(GM.c.consumer_uuid.not_in(
            list(exclude_consumers)))
    with db.reader() as session:
        return collections.Counter(
            {host: count for host, count in session.execute(query)})
