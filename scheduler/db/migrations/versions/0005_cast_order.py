"""When the last applied message about an aggregate was sent, so casts
that arrive out of order never undo a later one.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

from scheduler.db import types

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('aggregates', sa.Column('updated_at', types.Timestamp,
                                          nullable=True))
