"""Which claims one RPC call wrote, so that they can be given back if
its caller never learnt of them.

A call's server opens a record around the call (``recording()``, one per
thread: the context variable is the thread's); ``claims.claim_resources``
and ``claims.held_claims`` note every claim they commit or hand over
again, each with the ``created_at`` stamp it carries in the database.
That stamp is the claim's token: a repeated request that is answered
with the claims a consumer already holds stamps them anew, so a release
of the older record (``claims.release_written``) finds nothing of them.
Outside a record, noting is a no-op.
"""

import contextlib
import contextvars
import dataclasses
import datetime


@dataclasses.dataclass(frozen=True)
class Written:
    """One consumer's claim on one provider, as committed."""

    consumer_uuid: str
    provider_id: int
    created_at: datetime.datetime


_RECORD = contextvars.ContextVar('scheduler_claim_record', default=None)


@contextlib.contextmanager
def recording():
    """Collect the claims written inside the block; yields the list."""
    written = []
    token = _RECORD.set(written)
    try:
        yield written
    finally:
        _RECORD.reset(token)


def note(pairs, created_at):
    """The claims of ``pairs`` (consumer uuid, provider id) were
    committed with ``created_at``."""
    written = _RECORD.get()
    if written is not None:
        written.extend(Written(consumer, provider, created_at)
                       for consumer, provider in sorted(pairs))
