"""What a worker does with a message body before oslo.messaging decodes it.

``install(max_bytes)`` (once per worker process) bounds what one message
body may cost by ``max_bytes`` (``[limits] max_message_bytes``), through
kombu's registries, which every message oslo.messaging reads goes
through:

* a JSON body larger than ``max_bytes`` is refused before it is decoded
  (decoding costs several times its size: the text, the envelope's inner
  string, then the Python objects); what it costs is the body as the
  broker client assembled it from its frames (about twice its size for
  a moment), freed once dropped. Only the broker can refuse it earlier
  (RabbitMQ's ``max_message_size``);
* every compressed body inflates at most ``max_bytes``: the decoders of
  kombu's compression registry are replaced by bounded ones, and formats
  that cannot be bounded are refused.

A message that fails to decode (too large, not UTF-8, not JSON) is
dropped by oslo.messaging; the filter installed here turns its log record
into one warning line instead of a traceback. ``install`` also makes a
broker outage two log lines (``log_filters.expected_broker_faults``): the
rabbit driver's log is filtered in one place, here.
"""

import bz2
import lzma
import zlib

from kombu import compression
from kombu import serialization
from kombu.utils import json as kombu_json

from scheduler.rpc import log_filters

_UNBOUNDED = ('application/x-brotli', 'application/zstd')


class MessageTooLarge(ValueError):
    pass


def _bounded(new_decompressor, max_bytes):
    def decode(body):
        inflater = new_decompressor()
        body = inflater.decompress(body, max_bytes + 1)
        if len(body) > max_bytes:
            raise MessageTooLarge(
                'compressed body inflates past [limits] max_message_bytes '
                '(%d)' % max_bytes)
        return body
    return decode


def _bounded_json(max_bytes):
    def decode(body):
        if len(body) > max_bytes:
            raise MessageTooLarge(
                'a body of %d bytes is larger than [limits] '
                'max_message_bytes (%d)' % (len(body), max_bytes))
        return kombu_json.loads(body)
    return decode


def _refuse(content_type):
    def decode(body):
        raise MessageTooLarge('%s bodies are not accepted (they cannot be '
                              'inflated with a bound)' % content_type)
    return decode


def install(max_bytes):
    """Bound decoding in this process (idempotent)."""
    # kombu's own registration of JSON, with the size checked first
    serialization.register('json', kombu_json.dumps, _bounded_json(
        max_bytes), content_type='application/json',
        content_encoding='utf-8')
    compression.register(zlib.compress, _bounded(
        lambda: zlib.decompressobj(), max_bytes), 'application/x-gzip',
        aliases=['gzip', 'zlib'])
    compression.register(bz2.compress, _bounded(
        bz2.BZ2Decompressor, max_bytes), 'application/x-bz2',
        aliases=['bzip2', 'bzip'])
    compression.register(lzma.compress, _bounded(
        lzma.LZMADecompressor, max_bytes), 'application/x-lzma',
        aliases=['lzma', 'xz'])
    for content_type in _UNBOUNDED:
        compression.register(None, _refuse(content_type), content_type)
    log_filters.expected_broker_faults()
