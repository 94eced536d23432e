"""[database] options, owned by oslo.db; only the default URL is ours.

The default is a SQLite file in the current directory, which is enough for
one machine. Production uses PostgreSQL or MySQL/MariaDB, e.g.
``postgresql+psycopg2://user@db/scheduler`` or
``mysql+pymysql://user:pw@db/scheduler``.
"""

from oslo_db import options as db_options

DEFAULT_CONNECTION = 'sqlite:///scheduler.sqlite'


def register_opts(conf):
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION)


def list_opts():
    # oslo.db publishes its own [database] options under the "oslo.db"
    # generator namespace; listing them here too would duplicate them.
    return {}
