"""SQLAlchemy Core tables of the scheduler database.

* ``providers``: one row per resource provider (a compute node is one kind).
  ``generation`` is bumped under the one provider lock
  (``scheduler.db.changes.Change.lock_providers``), which every
  transaction that changes the provider or its usage takes, once (by the
  lock itself, or on PostgreSQL by the feed's stamp): it counts the
  committed changes of the provider (0 when created).
  ``change_seq`` is the value of the global change counter at the provider's
  last change, so workers can pull only what changed since they last looked.
* ``inventories``: per provider and resource class: totals, ratios, and the
  two usages the scheduler compares (``reported_used`` from the tracker,
  ``claimed`` = sum of allocations, kept in the same transaction as them).
  ``capacity`` is ``int((total - reserved) * allocation_ratio)``.
* ``allocations``: claims, one row per consumer, provider and class.
* ``change_stripes``: the change feed (``scheduler.db.changes``): every
  write transaction bumps one of 64 stripe counters last and stamps the
  rows it changed with ``(feed_stripe, feed_seq)``.
* ``change_counter`` and the ``change_seq`` columns: the previous
  release's single-row feed, still written under ``[database]
  legacy_change_counter`` while workers of that release run.
"""

import sqlalchemy as sa

from scheduler.db import types

metadata = sa.MetaData()


def _feed_columns():
    """The change-feed stamp of a followed table (migration 0003)."""
    return (sa.Column('feed_stripe', sa.Integer, nullable=False, default=0,
                      server_default='0'),
            sa.Column('feed_seq', sa.BigInteger, nullable=False, default=0,
                      server_default='0'))

providers = sa.Table(
    'providers', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('host', sa.String(255), nullable=False),
    sa.Column('nodename', sa.String(255), nullable=False),
    sa.Column('kind', sa.String(32), nullable=False, default='compute'),
    sa.Column('generation', sa.BigInteger, nullable=False, default=0),
    sa.Column('change_seq', sa.BigInteger, nullable=False, default=0,
              index=True),
    sa.Column('disabled', sa.Boolean, nullable=False, default=False),
    sa.Column('availability_zone', sa.String(255), nullable=True),
    sa.Column('reported_at', types.Timestamp, nullable=True),
    sa.Column('created_at', types.Timestamp, nullable=False),
    sa.Column('attributes', types.LongText, nullable=True),
    sa.Column('failed_builds', sa.Integer, nullable=False, default=0,
              server_default='0'),
    sa.UniqueConstraint('host', 'nodename', name='uniq_providers0host0node'),
    *_feed_columns(),
)

inventories = sa.Table(
    'inventories', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('provider_id', sa.Integer,
              sa.ForeignKey('providers.id', ondelete='CASCADE'),
              nullable=False),
    sa.Column('resource_class', sa.String(255), nullable=False),
    sa.Column('total', sa.BigInteger, nullable=False),
    sa.Column('reserved', sa.BigInteger, nullable=False, default=0),
    sa.Column('min_unit', sa.BigInteger, nullable=False, default=1),
    sa.Column('max_unit', sa.BigInteger, nullable=False),
    sa.Column('step_size', sa.BigInteger, nullable=False, default=1),
    sa.Column('allocation_ratio', sa.Float, nullable=False, default=1.0),
    # the ratio the tracker asked for; allocation_ratio is the effective
    # one, which aggregate metadata may override (scheduler.db.ratios)
    sa.Column('reported_ratio', sa.Float, nullable=False, default=1.0,
              server_default='1.0'),
    sa.Column('capacity', sa.BigInteger, nullable=False),
    sa.Column('reported_used', sa.BigInteger, nullable=False, default=0),
    sa.Column('claimed', sa.BigInteger, nullable=False, default=0),
    sa.UniqueConstraint('provider_id', 'resource_class',
                        name='uniq_inventories0provider0class'),
)

allocations = sa.Table(
    'allocations', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('consumer_uuid', sa.String(36), nullable=False, index=True),
    sa.Column('provider_id', sa.Integer,
              sa.ForeignKey('providers.id', ondelete='CASCADE'),
              nullable=False, index=True),
    sa.Column('resource_class', sa.String(255), nullable=False),
    sa.Column('amount', sa.BigInteger, nullable=False),
    sa.Column('created_at', types.Timestamp, nullable=False),
    sa.Column('confirmed_at', types.Timestamp, nullable=True),
)

change_counter = sa.Table(
    'change_counter', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('value', sa.BigInteger, nullable=False),
)

change_stripes = sa.Table(
    'change_stripes', metadata,
    sa.Column('stripe', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('seq', sa.BigInteger, nullable=False),
)

# -- pushed data (migration 0002) ---------------------------------------

aggregates = sa.Table(
    'aggregates', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('name', sa.String(255), nullable=True),
    sa.Column('metadata_json', types.LongText, nullable=False),
    sa.Column('hosts_json', types.LongText, nullable=False),
    # a deleted aggregate stays as a tombstone so workers see it go
    sa.Column('deleted', sa.Boolean, nullable=False, default=False),
    sa.Column('change_seq', sa.BigInteger, nullable=False, index=True),
    *_feed_columns(),
    # when the last applied message was sent (migration 0003): casts
    # arriving out of order never undo a later one
    sa.Column('updated_at', types.Timestamp, nullable=True),
)

instances = sa.Table(
    'instances', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('host', sa.String(255), nullable=True, index=True),
    sa.Column('node', sa.String(255), nullable=True),
    sa.Column('project_id', sa.String(255), nullable=True),
    sa.Column('group_uuid', sa.String(36), nullable=True),
    sa.Column('attributes', types.LongText, nullable=True),
    sa.Column('updated_at', types.Timestamp, nullable=False),
    # a forgotten instance stays as a tombstone so workers see it go
    sa.Column('deleted', sa.Boolean, nullable=False, default=False),
    sa.Column('change_seq', sa.BigInteger, nullable=False, default=0,
              index=True),
    *_feed_columns(),
)

# One row per server group: claims lock it so that members of one group
# are placed one transaction at a time (policies hold under concurrency).
instance_groups = sa.Table(
    'instance_groups', metadata,
    sa.Column('uuid', sa.String(36), primary_key=True),
    sa.Column('policy', sa.String(32), nullable=False),
    sa.Column('generation', sa.BigInteger, nullable=False, default=0),
)

group_members = sa.Table(
    'group_members', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('group_uuid', sa.String(36), nullable=False, index=True),
    sa.Column('consumer_uuid', sa.String(36), nullable=False, index=True),
    sa.Column('host', sa.String(255), nullable=False),
    sa.Column('created_at', types.Timestamp, nullable=False),
    sa.UniqueConstraint('group_uuid', 'consumer_uuid',
                        name='uniq_group_members0group0consumer'),
)

for _table in (providers, aggregates, instances):
    sa.Index('ix_%s_feed' % _table.name, _table.c.feed_stripe,
             _table.c.feed_seq)
