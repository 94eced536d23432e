"""Initial schema: providers, inventories, allocations, change counter.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from scheduler.db import types

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'providers',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('nodename', sa.String(255), nullable=False),
        sa.Column('kind', sa.String(32), nullable=False),
        sa.Column('generation', sa.BigInteger, nullable=False),
        sa.Column('change_seq', sa.BigInteger, nullable=False),
        sa.Column('disabled', sa.Boolean, nullable=False),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        sa.Column('reported_at', types.Timestamp, nullable=True),
        sa.Column('created_at', types.Timestamp, nullable=False),
        sa.Column('attributes', sa.Text, nullable=True),
        sa.UniqueConstraint('uuid', name='uniq_providers0uuid'),
        sa.UniqueConstraint('host', 'nodename',
                            name='uniq_providers0host0node'),
    )
    op.create_index('ix_providers_change_seq', 'providers', ['change_seq'])
    op.create_table(
        'inventories',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('provider_id', sa.Integer,
                  sa.ForeignKey('providers.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('resource_class', sa.String(255), nullable=False),
        sa.Column('total', sa.BigInteger, nullable=False),
        sa.Column('reserved', sa.BigInteger, nullable=False),
        sa.Column('min_unit', sa.BigInteger, nullable=False),
        sa.Column('max_unit', sa.BigInteger, nullable=False),
        sa.Column('step_size', sa.BigInteger, nullable=False),
        sa.Column('allocation_ratio', sa.Float, nullable=False),
        sa.Column('capacity', sa.BigInteger, nullable=False),
        sa.Column('reported_used', sa.BigInteger, nullable=False),
        sa.Column('claimed', sa.BigInteger, nullable=False),
        sa.UniqueConstraint('provider_id', 'resource_class',
                            name='uniq_inventories0provider0class'),
    )
    op.create_table(
        'allocations',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('consumer_uuid', sa.String(36), nullable=False),
        sa.Column('provider_id', sa.Integer,
                  sa.ForeignKey('providers.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('resource_class', sa.String(255), nullable=False),
        sa.Column('amount', sa.BigInteger, nullable=False),
        sa.Column('created_at', types.Timestamp, nullable=False),
        sa.Column('confirmed_at', types.Timestamp, nullable=True),
    )
    op.create_index('ix_allocations_consumer_uuid', 'allocations',
                    ['consumer_uuid'])
    op.create_index('ix_allocations_provider_id', 'allocations',
                    ['provider_id'])
    counter = op.create_table(
        'change_counter',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
        sa.Column('value', sa.BigInteger, nullable=False),
    )
    op.bulk_insert(counter, [{'id': 1, 'value': 0}])
