"""[database] options, owned by oslo.db; only their defaults are ours.

The default URL is a SQLite file in the current directory, which is enough
for one machine. Production uses PostgreSQL or MySQL/MariaDB, e.g.
``postgresql+psycopg2://user@db/scheduler`` or
``mysql+pymysql://user:pw@db/scheduler``.

``register_opts(conf)`` gives ``conf`` these defaults;
``set_sample_defaults()`` (the ``oslo.config.opts.defaults`` entry point,
called by ``oslo-config-generator`` only) writes them into oslo.db's
option definitions, so that the sample documents the values the commands
use rather than oslo.db's (``connection = <None>``).
"""

from oslo_config import cfg
from oslo_db import options as db_options

DEFAULT_CONNECTION = 'sqlite:///scheduler.sqlite'
# Pool sized for the 16 RPC threads of a worker: enough connections that
# no request waits for one, few enough that several workers on a few
# machines stay well below PostgreSQL's default 100 connections.
DEFAULTS = {'connection': DEFAULT_CONNECTION, 'max_pool_size': 8,
             'max_overflow': 16}


#: [database] idle_transaction_timeout's default, seconds
IDLE_TRANSACTION_TIMEOUT = 10

_OPTS = [
    cfg.IntOpt('idle_transaction_timeout',
               default=IDLE_TRANSACTION_TIMEOUT, min=0,
               help='Seconds a transaction of the scheduler may stay open '
                    'without sending a statement before the database '
                    'server ends it and releases its row locks '
                    '(PostgreSQL idle_in_transaction_session_timeout, '
                    'MariaDB idle_transaction_timeout). A scheduler host '
                    'cut off the network in the middle of a claim would '
                    'otherwise hold the locks of the hosts it was '
                    'claiming on until the database server noticed the '
                    'connection dead (TCP keepalive: two hours by '
                    'default), and every other worker claiming on those '
                    'hosts would wait that long. No transaction of the '
                    'scheduler waits between its statements. 0 leaves '
                    "the server's own setting (MySQL has none)."),
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
                     '(see doc/source/performance-history.rst). Possible '
                     'values: True, False. Related: [scheduler] '
                     'refresh_interval.'),
]


def register_opts(conf):
    db_options.set_defaults(conf, **DEFAULTS)
    conf.register_opts(_OPTS, group='database')


def set_sample_defaults():
    # oslo.db lists its module-level options to the generator: the only
    # place its defaults can be changed for the sample. A process that
    # serves never calls this; its ConfigOpts get DEFAULTS above.
    cfg.set_defaults(db_options.database_opts, **DEFAULTS)


def list_opts():
    # oslo.db publishes its own [database] options under the "oslo.db"
    # generator namespace; only ours are listed here.
    return {'database': _OPTS}
