"""Service records: one row per scheduler worker process, with the release,
RPC and object versions it runs and a heartbeat.

Expand only: a new table, nothing the previous release reads changes, so
its workers keep running on a database this migration upgraded.

Revision ID: 0004
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

from scheduler.db import types

revision = '0004'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'services',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('binary', sa.String(64), nullable=False),
        sa.Column('pid', sa.Integer, nullable=False),
        sa.Column('worker', sa.Integer, nullable=False),
        sa.Column('release', sa.String(64), nullable=False),
        sa.Column('rpc_version', sa.String(16), nullable=False),
        sa.Column('object_versions', sa.Text, nullable=False),
        sa.Column('started_at', types.Timestamp, nullable=False),
        sa.Column('heartbeat_at', types.Timestamp, nullable=False),
    )
    op.create_index('services_heartbeat_idx', 'services', ['heartbeat_at'])
