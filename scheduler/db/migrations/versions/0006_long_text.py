"""Text columns as LONGTEXT on MySQL/MariaDB, whose TEXT stops at 64 KiB
(an aggregate of some 5,000 hosts did not fit); other databases are left
as they are (their TEXT has no such bound).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

#: (table, column, nullable) of every text column
TEXT_COLUMNS = (('providers', 'attributes', True),
                ('aggregates', 'metadata_json', False),
                ('aggregates', 'hosts_json', False),
                ('instances', 'attributes', True),
                ('services', 'object_versions', False))


def upgrade():
    if op.get_bind().dialect.name != 'mysql':
        return
    for table, column, nullable in TEXT_COLUMNS:
        op.alter_column(table, column, type_=mysql.LONGTEXT(),
                        existing_type=sa.Text(), existing_nullable=nullable)
