"""While a database restarts, the libraries' own error records are one
line each (``log_filters.expected_database_faults``), not tracebacks."""

import logging

from oslo_db import exception as db_exc

from scheduler.rpc import log_filters


def test_retries_running_out_are_one_warning_line(caplog):
    log_filters.expected_database_faults()
    log_filters.expected_database_faults()   # idempotent
    logger = logging.getLogger('oslo_db.api')
    try:
        raise db_exc.DBConnectionError(Exception('(2003, "Can\'t connect")'))
    except db_exc.DBConnectionError:
        with caplog.at_level(logging.WARNING, logger='oslo_db.api'):
            logger.exception('DB exceeded retry limit.')
    [record] = [r for r in caplog.records if r.name == 'oslo_db.api']
    assert record.levelno == logging.WARNING
    assert record.exc_info is None or not record.exc_info[0]
    assert record.getMessage().startswith(
        'A database transaction still failed after its retries: '
        'DBConnectionError')
