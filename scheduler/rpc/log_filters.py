"""Log records of known, expected faults as one warning line.

Libraries log some faults the scheduler expects and handles with a full
traceback: oslo.messaging when a message cannot be decoded, SQLAlchemy's
pool when a connection died while the database restarted.
``one_line(logger, prefixes, text)`` rewrites such records (those whose
message starts with one of ``prefixes``) into one WARNING line,
``text: ExceptionName: message``; any other record passes unchanged.
"""

import logging


class OneLine(logging.Filter):

    def __init__(self, prefixes, text):
        super().__init__()
        self.prefixes = tuple(prefixes)
        self.text = text

    def filter(self, record):
        if record.exc_info and str(record.msg).startswith(self.prefixes):
            error = record.exc_info[1]
            record.msg = '%s: %s: %s'
            record.args = (self.text, type(error).__name__,
                           str(error).replace('\n', ' ')[:200])
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, 'WARNING'
        return True


def one_line(logger_name, prefixes, text):
    """Install the filter on ``logger_name`` once (idempotent)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, OneLine) and f.text == text
               for f in logger.filters):
        logger.addFilter(OneLine(prefixes, text))


def expected_database_faults():
    """SQLAlchemy's pool, while a database restarts."""
    one_line('sqlalchemy.pool.impl.QueuePool',
             ('Exception during reset', 'Exception closing connection',
              'Exception terminating connection'),
             'Dropped a database connection that broke')
