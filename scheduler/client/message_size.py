"""How large an RPC message is on the wire, measured before it is sent.

oslo.messaging encodes a message's arguments as JSON, and that JSON goes
into its envelope as a JSON string: every ``"`` and ``\\`` is escaped once
more. ``encoded_size(primitive)`` is the number of bytes an argument
(already serialized to primitives) takes in the body RabbitMQ receives,
uncompressed; ``check(method, sizes, limit)`` raises
``exception.MessageTooLarge`` naming the method, the largest argument, the
size and the limit when the arguments together exceed ``limit``
(``[limits] max_message_bytes``). The envelope (context, message id,
reply queue) adds about a kilobyte, which the limit's margin below the
broker's own maximum covers.

The cost is one ``json.dumps`` (C encoder) per argument: about 10-40 us
for a select_destinations request, against ~15 ms for the call.
"""

import json

from scheduler import exception

_ENCODE = json.JSONEncoder(default=str).encode


def encoded_size(primitive):
    """Bytes of ``primitive`` in an oslo.messaging body (see module)."""
    text = _ENCODE(primitive)       # ensure_ascii: one byte a character
    return len(text) + text.count('"') + text.count('\\')


def check(method, sizes, limit):
    """``sizes``: argument name -> encoded size. Raise if too large."""
    total = sum(sizes.values())
    if total > limit:
        largest = max(sizes, key=sizes.get) if sizes else 'message'
        raise exception.MessageTooLarge(field=largest, method=method,
                                        size=total, limit=limit)
    return total
