"""oslo.messaging's rabbit wire format, read and written.

A message's body is a JSON object, the envelope ``{"oslo.version":
"2.0", "oslo.message": "<JSON text>"}``; the inner text is the message:
``method``, ``args``, ``version``, ``namespace``, the caller's context as
``_context_<key>`` keys, and for a call ``_msg_id`` (the caller's id of
this call), ``_reply_q`` (the queue the reply goes to) and ``_timeout``
(the caller's call-monitor timeout); ``_unique_id`` on every message.
A body without the envelope is read as the message itself, as
oslo.messaging reads one (a sender older than the envelope).

A reply is the same envelope around ``result``, ``failure`` (a remote
exception, JSON text: ``class``, ``module``, ``message``, ``tb``,
``args``, ``kwargs``), ``ending`` (False: a call-monitor heartbeat) and
``_msg_id``, published to the default exchange with the reply queue's
name as routing key. The format is oslo.messaging's, stable across its
releases because rolling upgrades depend on it; the transport contract
tests hold this module to oslo.messaging's own client and server.
"""

import re
import traceback
import uuid

from oslo_serialization import jsonutils

VERSION_KEY = 'oslo.version'
MESSAGE_KEY = 'oslo.message'
#: the envelope version written; a reader accepts any 2.x
ENVELOPE_VERSION = '2.0'
CONTEXT_PREFIX = '_context_'
MSG_ID = '_msg_id'
REPLY_Q = '_reply_q'
TIMEOUT = '_timeout'
UNIQUE_ID = '_unique_id'
#: oslo.messaging's suffix of a re-raised remote exception's class
REMOTE_SUFFIX = '_Remote'


class WireError(ValueError):
    """A body that is not an oslo.messaging message."""


def unpack(body):
    """The message dict inside a decoded body (module docstring)."""
    if not isinstance(body, dict):
        raise WireError('a message body is a JSON object, not %s'
                        % type(body).__name__)
    if VERSION_KEY not in body or MESSAGE_KEY not in body:
        return body
    version = str(body[VERSION_KEY])
    if version.split('.')[0] != ENVELOPE_VERSION.split('.')[0]:
        raise WireError('envelope version %s: this server reads %s.x'
                        % (version, ENVELOPE_VERSION.split('.')[0]))
    inner = body[MESSAGE_KEY]
    if not isinstance(inner, str):
        raise WireError('the envelope\'s %s is JSON text, not %s'
                        % (MESSAGE_KEY, type(inner).__name__))
    try:
        message = jsonutils.loads(inner)
    except ValueError as exc:
        raise WireError('the envelope\'s %s is not JSON: %s'
                        % (MESSAGE_KEY, exc))
    if not isinstance(message, dict):
        raise WireError('the envelope\'s %s holds a JSON object, not %s'
                        % (MESSAGE_KEY, type(message).__name__))
    return message


def text_length(body):
    """The characters of the JSON text ``unpack`` reads the message of
    a decoded ``body`` from (the envelope's inner text), stated only for
    a text that holds no surrogate, escaped or not (no string read from
    it can be invalid unicode); None for such a text and for a body
    without the envelope (decoded by kombu, its text not kept). The edge
    bounds the number of values in a message by it, and checks the
    strings of a message of unknown length itself."""
    if not (isinstance(body, dict) and VERSION_KEY in body and
            isinstance(body.get(MESSAGE_KEY), str)):
        return None
    text = body[MESSAGE_KEY]
    return None if _may_hold_surrogates(text) else len(text)


#: a surrogate escaped in JSON text (a pair, a non-BMP character, too)
_ESCAPED_SURROGATE = re.compile(r'\\u[dD][89a-fA-F]')


def _may_hold_surrogates(text):
    if not text.isascii():      # oslo.messaging's JSON is ASCII
        try:
            text.encode('utf-8')
        except UnicodeEncodeError:
            return True
    return '\\u' in text and _ESCAPED_SURROGATE.search(text) is not None


def pack(message):
    """``message`` (a dict) in the envelope, ready to publish as JSON."""
    return {VERSION_KEY: ENVELOPE_VERSION,
            MESSAGE_KEY: jsonutils.dumps(message)}


class Envelope:
    """What the transport reads off a message dict (and removes from
    it, leaving ``method``, ``args``, ``version``, ``namespace``):
    ``ctxt`` (the context keys without their prefix), ``msg_id`` and
    ``reply_q`` (None for a cast), ``client_timeout`` and
    ``unique_id``."""

    __slots__ = ('ctxt', 'msg_id', 'reply_q', 'client_timeout',
                 'unique_id')

    def __init__(self, message):
        self.ctxt = {key[len(CONTEXT_PREFIX):]: message.pop(key)
                     for key in [k for k in message
                                 if k.startswith(CONTEXT_PREFIX)]}
        self.msg_id = message.pop(MSG_ID, None)
        self.reply_q = message.pop(REPLY_Q, None)
        self.client_timeout = message.pop(TIMEOUT, None)
        self.unique_id = message.pop(UNIQUE_ID, None)


def reply(msg_id, result=None, failure=None, ending=True):
    """The body of a reply (``ending``) or of a call-monitor heartbeat;
    ``failure`` is ``remote_failure``'s text."""
    return pack({'result': result, 'failure': failure, 'ending': ending,
                 MSG_ID: msg_id, UNIQUE_ID: uuid.uuid4().hex})


def remote_failure(exc_info):
    """An exception (``sys.exc_info()``) as the JSON text a caller's
    oslo.messaging turns back into it (the class, if its module is one
    the caller allows; ``RemoteError`` otherwise)."""
    failure = exc_info[1]
    cls_name = type(failure).__name__
    module = type(failure).__module__
    if cls_name.endswith(REMOTE_SUFFIX) and module.endswith(REMOTE_SUFFIX):
        # a remote exception raised again: the original's names
        cls_name = cls_name[:-len(REMOTE_SUFFIX)]
        module = module[:-len(REMOTE_SUFFIX)]
    return jsonutils.dumps({
        'class': cls_name, 'module': module, 'message': str(failure),
        'tb': traceback.format_exception(*exc_info),
        'args': failure.args, 'kwargs': getattr(failure, 'kwargs', {})})
