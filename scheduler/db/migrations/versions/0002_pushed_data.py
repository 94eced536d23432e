"""Aggregates, instances per host, server groups and their members,
failed builds per provider, and the ratio each tracker reported.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from scheduler.db import types

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    # builds that failed on the provider since its tracker last said
    # otherwise (BuildFailureWeigher)
    op.add_column('providers', sa.Column('failed_builds', sa.Integer,
                                         nullable=False,
                                         server_default='0'))
    # the tracker's own ratio, kept apart from the effective one that
    # aggregate metadata may override
    op.add_column('inventories', sa.Column('reported_ratio', sa.Float,
                                           nullable=False,
                                           server_default='1.0'))
    op.execute('UPDATE inventories SET reported_ratio = allocation_ratio')
    op.create_table(
        'aggregates',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=True),
        sa.Column('metadata_json', sa.Text, nullable=False),
        sa.Column('hosts_json', sa.Text, nullable=False),
        sa.Column('deleted', sa.Boolean, nullable=False),
        sa.Column('change_seq', sa.BigInteger, nullable=False),
        sa.UniqueConstraint('uuid', name='uniq_aggregates0uuid'),
    )
    op.create_index('ix_aggregates_change_seq', 'aggregates',
                    ['change_seq'])
    op.create_table(
        'instances',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('node', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('group_uuid', sa.String(36), nullable=True),
        sa.Column('attributes', sa.Text, nullable=True),
        sa.Column('updated_at', types.Timestamp, nullable=False),
        sa.Column('deleted', sa.Boolean, nullable=False),
        sa.Column('change_seq', sa.BigInteger, nullable=False),
        sa.UniqueConstraint('uuid', name='uniq_instances0uuid'),
    )
    op.create_index('ix_instances_host', 'instances', ['host'])
    op.create_index('ix_instances_change_seq', 'instances', ['change_seq'])
    op.create_table(
        'instance_groups',
        sa.Column('uuid', sa.String(36), primary_key=True),
        sa.Column('policy', sa.String(32), nullable=False),
        sa.Column('generation', sa.BigInteger, nullable=False),
    )
    op.create_table(
        'group_members',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('group_uuid', sa.String(36), nullable=False),
        sa.Column('consumer_uuid', sa.String(36), nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('created_at', types.Timestamp, nullable=False),
        sa.UniqueConstraint('group_uuid', 'consumer_uuid',
                            name='uniq_group_members0group0consumer'),
    )
    op.create_index('ix_group_members_group_uuid', 'group_members',
                    ['group_uuid'])
    op.create_index('ix_group_members_consumer_uuid', 'group_members',
                    ['consumer_uuid'])
