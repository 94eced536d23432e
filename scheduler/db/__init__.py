"""The scheduler's own database: models, engine/session handling, alembic
migrations and the queries the rest of the service uses. Nothing outside
this package (and ``scheduler.db.claims``) writes SQL."""
