"""A striped change feed: no single row that every writer must lock.

Adds ``change_stripes`` (STRIPES rows, one counter each) and, on each
table workers follow (providers, aggregates, instances), the stripe and
the stripe's value of the row's last change (``feed_stripe``,
``feed_seq``) with an index on both. Only additions: the previous release
keeps reading and writing ``change_counter`` and ``change_seq``
(``[database] legacy_change_counter`` keeps both feeds fed while it runs).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

# enough that two concurrent writers rarely draw the same stripe (1/64),
# few enough that a worker reads all of them in one small query
STRIPES = 64
_FOLLOWED = ('providers', 'aggregates', 'instances')


def upgrade():
    stripes = op.create_table(
        'change_stripes',
        sa.Column('stripe', sa.Integer, primary_key=True,
                  autoincrement=False),
        sa.Column('seq', sa.BigInteger, nullable=False),
    )
    op.bulk_insert(stripes, [{'stripe': s, 'seq': 0}
                             for s in range(STRIPES)])
    for table in _FOLLOWED:
        op.add_column(table, sa.Column('feed_stripe', sa.Integer,
                                       nullable=False, server_default='0'))
        op.add_column(table, sa.Column('feed_seq', sa.BigInteger,
                                       nullable=False, server_default='0'))
        op.create_index('ix_%s_feed' % table, table,
                        ['feed_stripe', 'feed_seq'])

