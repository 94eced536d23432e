"""The scheduler's own database: every SQL statement lives here.

Tables and alembic migrations, engine and session handling, the change
feed and its one write primitive (``changes.write``), the claims
(``claims``) and the queries the rest of the service uses. Nothing outside
this package writes or reads SQL; nothing here knows RPC, threads of the
service, or the driver.
"""
