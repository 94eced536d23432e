"""Alembic environment: runs on the connection ``db_sync`` hands over."""

from alembic import context

from scheduler.db import models

config = context.config
connection = config.attributes['connection']
context.configure(connection=connection, target_metadata=models.metadata,
                  render_as_batch=connection.dialect.name == 'sqlite')
with context.begin_transaction():
    context.run_migrations()
