"""Compressed bodies are inflated with a bound; undecodable messages are
one warning line."""

import logging
import sys
import zlib

import pytest
from kombu import compression

from scheduler.rpc import inbound


def test_a_zip_bomb_is_refused_at_the_bound():
    inbound.install(1024)
    bomb = zlib.compress(b'0' * (50 * 1024 * 1024))
    assert len(bomb) < 100 * 1024
    with pytest.raises(inbound.MessageTooLarge, match='max_message_bytes'):
        compression.decompress(bomb, 'zlib')
    small = zlib.compress(b'{"ok": 1}')
    assert compression.decompress(small, 'application/x-gzip') == \
        b'{"ok": 1}'


def test_formats_without_a_bound_are_refused():
    inbound.install(1024)
    with pytest.raises(inbound.MessageTooLarge, match='not accepted'):
        compression.get_decoder('application/zstd')(b'x')


def test_an_undecodable_message_is_one_warning_line():
    inbound.install(1024)
    # the rabbit driver's logger, which logs it (found by the filters
    # through oslo.messaging's entry points, named here to check them)
    rabbit = 'oslo.messaging._drivers.impl_rabbit'
    record = logging.LogRecord(
        rabbit, logging.ERROR, __file__, 1,
        'Failed to process message ... skipping it.', (), None)
    try:
        b'\xff'.decode('utf-8')
    except UnicodeDecodeError:
        record.exc_info = sys.exc_info()
    for filt in logging.getLogger(rabbit).filters:
        filt.filter(record)
    assert record.exc_info is None and record.levelname == 'WARNING'
    assert record.getMessage().startswith(
        'Dropped a message that cannot be decoded: UnicodeDecodeError')
