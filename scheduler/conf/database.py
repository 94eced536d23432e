"""[database] options, owned by oslo.db; only the default URL is ours.

The default is a SQLite file in the current directory, which is enough for
one machine. Production uses PostgreSQL or MySQL/MariaDB, e.g.
``postgresql+psycopg2://user@db/scheduler`` or
``mysql+pymysql://user:pw@db/scheduler``.
"""

from oslo_db import options as db_options

DEFAULT_CONNECTION = 'sqlite:///scheduler.sqlite'


def register_opts(conf):
    # Pool sized for the 16 RPC threads of a worker: enough connections
    # that no request waits for one, few enough that several workers on a
    # few machines stay well below PostgreSQL's default 100 connections.
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION,
                            max_pool_size=8, max_overflow=16)


def list_opts():
    # oslo.db publishes its own [database] options under the "oslo.db"
    # generator namespace; listing them here too would duplicate them.
    return {}
