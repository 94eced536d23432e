"""Log records of known, expected faults as one warning line.

Libraries log some faults the scheduler expects and handles with a full
traceback: oslo.messaging when a message cannot be decoded, SQLAlchemy's
pool when a connection died while the database restarted.
``one_line(logger, prefixes, text)`` rewrites such records (those whose
message starts with one of ``prefixes``) into one WARNING line,
``text: ExceptionName: message``; any other record passes unchanged.

``expected_broker_faults()`` makes a broker outage two lines per
process, whatever the number of connections and reconnect attempts:
oslo.messaging logs an error per attempt per connection (``AMQP server
on ... is unreachable ... Trying again in 1 seconds``, ``Connection
failed``, ``Failed to publish``, ``Failed to acknowledge`` ...). The
first such record of an outage becomes one WARNING line, ``Message broker
unreachable: <error>``; the next are dropped and counted; the first
``Reconnected to AMQP server`` becomes one INFO line, ``Message broker
reachable again after N s``, with the number of lines dropped; later
reconnections of the process's other connections are dropped too, and
so are lines of the kind that starts an outage for ``SETTLE`` seconds
after its end: they are its echoes (connections still in their retry
sleep, acknowledgements of messages read on a connection now closed).
A broker that stays away longer is logged as a new outage. A call the
outage lost (its request discarded, its reply undeliverable) keeps its
own line; a message delivered again after a reconnect, which
oslo.messaging skips as a duplicate, is one warning line without its
traceback.

The filters sit on oslo.messaging's own loggers (``messaging_loggers``),
found through the library's public driver entry points and its package
names, not through the module paths of its driver, which are private.
"""

import logging
from importlib import metadata

from scheduler.transport import outage as transport_outage

_DETAIL_LENGTH = 200


class OneLine(logging.Filter):

    def __init__(self, prefixes, text):
        super().__init__()
        self.prefixes = tuple(prefixes)
        self.text = text

    def filter(self, record):
        if record.exc_info and str(record.msg).startswith(self.prefixes):
            error = record.exc_info[1]
            _rewrite(record, logging.WARNING, '%s: %s: %s', self.text,
                     type(error).__name__,
                     str(error).replace('\n', ' ')[:_DETAIL_LENGTH])
        return True


def one_line(logger, prefixes, text):
    """Install the filter on ``logger`` (a logger or its name) once
    (idempotent)."""
    if isinstance(logger, str):
        logger = logging.getLogger(logger)
    if not any(isinstance(f, OneLine) and f.text == text
               for f in logger.filters):
        logger.addFilter(OneLine(prefixes, text))


def expected_database_faults():
    """SQLAlchemy's pool, and oslo.db's retries running out, while a
    database restarts: one line each, not a traceback (the request is
    answered ``DatabaseUnavailable`` and the outage has its own lines)."""
    one_line('sqlalchemy.pool.impl.QueuePool',
             ('Exception during reset', 'Exception closing connection',
              'Exception terminating connection'),
             'Dropped a database connection that broke')
    one_line('oslo_db.api', ('DB exceeded retry limit',),
             'A database transaction still failed after its retries')


# what oslo.messaging logs while the broker is away (format strings)
_BROKER_AWAY = (
    '[%(connection_id)s] AMQP server', 'Connection failed:',
    'A recoverable connection/channel error', 'Failed to consume message',
    'Failed to publish message', 'Failed to declare consumer',
    'Unexpected error during heartbeat', 'Unable to connect to AMQP',
    'Failed to acknowledge received message',
    'Failed to requeue received message',
    'Failed to process incoming message, retrying')
# left as they are: a call lost by the outage ('Discarding RPC request
# due to failed acknowledge', 'The reply ... failed to send') is a line
# of its own, the trace of a caller that got no answer
_BROKER_BACK = '[%(connection_id)s] Reconnected to AMQP server'


class BrokerOutage(logging.Filter):
    """oslo.messaging's records of a broker outage, through the
    process's ``scheduler.transport.outage.PROCESS`` (module doc), which
    the servers' consumer loops report to as well."""

    def __init__(self, outage=None):
        super().__init__()
        self.outage = outage or transport_outage.PROCESS

    def filter(self, record):
        text = str(record.msg)
        try:
            if text.startswith(_BROKER_BACK):
                return self._back(record)
            if text.startswith(_BROKER_AWAY):
                return self._away(record)
        except Exception:  # a filter must never fail the library's call
            pass
        return True

    def _away(self, record):
        if not self.outage.went_away():
            return False
        _rewrite(record, logging.WARNING, transport_outage.UNREACHABLE,
                 _detail(record).replace('\n', ' ')[:_DETAIL_LENGTH])
        return True

    def _back(self, record):
        back = self.outage.came_back()
        if back is None:
            return False
        _rewrite(record, logging.INFO, transport_outage.REACHABLE, *back)
        return True


def _detail(record):
    """The error of an outage record, without its retry advice."""
    args = record.args
    if isinstance(args, dict) and 'err_str' in args:
        return '%s:%s: %s' % (args.get('hostname'), args.get('port'),
                              args['err_str'])
    return record.getMessage()


def _rewrite(record, level, msg, *args):
    record.msg, record.args = msg, args
    record.exc_info = record.exc_text = None
    record.levelno, record.levelname = level, logging.getLevelName(level)


def messaging_loggers():
    """The loggers of oslo.messaging's rabbit driver and of what it
    imports, found without naming a module of the driver: its public
    plugin entry points (``oslo.messaging.drivers``, ``rabbit`` and
    ``kombu``) are loaded, which makes the modules' loggers, then every
    logger of the library's two package names is taken (oslo.messaging
    names some with a dot, some with an underscore)."""
    for entry in metadata.entry_points(group='oslo.messaging.drivers'):
        if entry.name in ('rabbit', 'kombu'):
            entry.load()
    made = logging.root.manager.loggerDict
    return [logging.getLogger(name) for name in sorted(made)
            if name.startswith(_MESSAGING_PACKAGES)
            and isinstance(made[name], logging.Logger)]


_MESSAGING_PACKAGES = ('oslo.messaging.', 'oslo_messaging.')


def expected_broker_faults():
    """Install the broker outage filter, and the one-line rewrites of a
    message that cannot be decoded and of a duplicate skipped after a
    reconnect, on oslo.messaging's loggers in this process (idempotent:
    a logger has each once)."""
    loggers = messaging_loggers()
    for logger in loggers:
        if not any(isinstance(f, BrokerOutage) for f in logger.filters):
            logger.addFilter(_PROCESS_OUTAGE)
        for prefixes, text in _ONE_LINE_MESSAGING:
            one_line(logger, prefixes, text)
    return loggers


_PROCESS_OUTAGE = BrokerOutage()
_ONE_LINE_MESSAGING = (
    # a body the rabbit driver cannot decode (rpc/inbound.py bounds it)
    (('Failed to process message',),
     'Dropped a message that cannot be decoded'),
    # a message read, not yet acknowledged, when a connection broke comes
    # again after the reconnect (late acknowledgement: rpc/late_ack.py);
    # oslo.messaging skips it with a traceback
    (('ignoring duplicate message',),
     'Skipped a message delivered again after a reconnect'))
