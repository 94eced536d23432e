"""[database] options, owned by oslo.db; only the default URL is ours.

The default is a SQLite file in the current directory, which is enough for
one machine. Production uses PostgreSQL or MySQL/MariaDB, e.g.
``postgresql+psycopg2://user@db/scheduler`` or
``mysql+pymysql://user:pw@db/scheduler``.
"""

from oslo_config import cfg
from oslo_db import options as db_options

DEFAULT_CONNECTION = 'sqlite:///scheduler.sqlite'


_OPTS = [
    cfg.BoolOpt('legacy_change_counter',
                default=False,
                help='Set it while workers of the previous release still '
                     'run against this database (a rolling upgrade), and '
                     'unset it once they are all gone. When set, every '
                     'write also bumps the single change_counter row and '
                     'stamps change_seq, which is how those workers learn '
                     'of changes, and this release also follows that '
                     'counter to learn of their writes. It makes every '
                     'writer of the cloud wait for that one row again '
                     '(see doc/performance.rst). Possible values: True, '
                     'False. Related: [scheduler] refresh_interval.'),
]


def register_opts(conf):
    # Pool sized for the 16 RPC threads of a worker: enough connections
    # that no request waits for one, few enough that several workers on a
    # few machines stay well below PostgreSQL's default 100 connections.
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION,
                            max_pool_size=8, max_overflow=16)
    conf.register_opts(_OPTS, group='database')


def list_opts():
    # oslo.db publishes its own [database] options under the "oslo.db"
    # generator namespace; only ours are listed here.
    return {'database': _OPTS}
