"""The scheduler configuration a benchmark runs with.

One nested dict (``{group: {option: value}}``) describes a run; it becomes
a ``ConfigOpts`` for in-process use (``make_conf``) or an ini file for a
``scheduler-server`` subprocess (``write_config``), so both see the same
options. The bench's choices on top of the defaults:

* a unique RPC topic and exchange per server, auto-deleted or expiring a
  minute after use, so nothing is left on the broker;
* ``service_down_time`` of a day: the populated hosts report once, at
  population time, and must not count as down while a long run goes on;
* a short graceful shutdown;
* at most 16 requests in flight per worker (``executor_thread_pool_size``,
  64 by default) with a DB pool to match (8 + 8 overflow instead of
  5 + 50): with the defaults, a burst of casts makes two workers open up
  to 110 connections, past PostgreSQL's default ``max_connections`` of
  100, and the reports that fail to connect are lost;
* ``refresh_interval`` of 50 ms: workers learn of each other's writes
  from a poller thread instead of a query per decision (the setting the
  option's help recommends for large clouds).
"""

import copy
import logging
import uuid

from scheduler import conf as sched_conf

RABBIT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'
BROKER_URL = 'amqp://guest:guest@127.0.0.1:5672//'
EXECUTOR_THREADS = 16
# workers learn of each other's writes from a poller thread, not from a
# query per decision (doc/source/performance-history.rst, "Learning of
# other workers' writes")
REFRESH_INTERVAL = 0.05


def base_values(db_url, topic=None, workers=2):
    topic = topic or unique_topic()
    return {
        'DEFAULT': {'transport_url': RABBIT_URL, 'workers': workers,
                    'control_exchange': topic,
                    'host': 'bench-%s' % uuid.uuid4().hex[:8],
                    'graceful_shutdown_timeout': 5, 'startup_retries': 2,
                    'executor_thread_pool_size': EXECUTOR_THREADS,
                    'debug': False},
        'scheduler': {'topic': topic,
                      'service_down_time': 86400,
                      'refresh_interval': REFRESH_INTERVAL},
        'database': {'connection': db_url, 'max_pool_size': 8,
                     'max_overflow': EXECUTOR_THREADS - 8},
        # fanout and reply queues expire a minute after their last use
        'oslo_messaging_rabbit': {'amqp_auto_delete': True,
                                  'rabbit_transient_queues_ttl': 60},
    }


def unique_topic():
    return 'bench-%s' % uuid.uuid4().hex[:12]


def merged(values, extra):
    """``values`` with ``extra`` (same shape) laid over it."""
    out = copy.deepcopy(values)
    for group, opts in (extra or {}).items():
        out.setdefault(group, {}).update(opts)
    return out


def client_values(values):
    """What a client (conductor, tracker) needs of a server's values."""
    return {
        'DEFAULT': {'transport_url': values['DEFAULT']['transport_url'],
                    'control_exchange':
                        values['DEFAULT']['control_exchange']},
        'scheduler': {'topic': values['scheduler']['topic']},
        'oslo_messaging_rabbit': dict(values['oslo_messaging_rabbit']),
    }


def quiet_client_logs():
    """Keep oslo.messaging's client warnings (e.g. about many concurrent
    callers sharing a reply queue, which is what a bench does) off the
    terminal; errors still show."""
    for name in ('oslo_messaging', 'amqp'):
        logging.getLogger(name).setLevel(logging.ERROR)


def make_conf(values):
    """A fresh ``ConfigOpts`` with ``values`` as overrides."""
    conf = sched_conf.new_config()
    conf([], project='scheduler', default_config_files=[],
         default_config_dirs=[])
    sched_conf.messaging.register_opts(conf)
    for group, opts in values.items():
        for name, value in opts.items():
            if group == 'DEFAULT' and name in ('debug', 'log_file'):
                continue  # oslo.log options, for the server only
            conf.set_override(name, value,
                              None if group == 'DEFAULT' else group)
    return conf


def write_config(path, values):
    lines = []
    for group, opts in values.items():
        lines.append('[%s]' % group)
        for name, value in opts.items():
            if isinstance(value, (list, tuple)):
                value = ','.join(str(v) for v in value)
            lines.append('%s = %s' % (name, value))
        lines.append('')
    with open(path, 'w') as f:
        f.write('\n'.join(lines))
    return path
