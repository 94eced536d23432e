"""One RPC message as the stages after its server see it: how long its
caller waits, how long its text was, and which claims it wrote.

The server that takes a call (``scheduler.rpc.late_ack``) makes one
``Call`` and passes it, as an argument, through the edge
(``EdgeRequest.call``), the manager and the driver
(``RequestState.call``) to the claim (``scheduler.db.claims``), which
adds what it commits to ``written``. Back in the server, after the
reply: a reply that went out after the caller stopped waiting gives
those claims back (``claims.release_written``), since nobody builds on
them.

A claim's ``created_at`` stamp is its token: a repeated request answered
with the claims a consumer already holds stamps them anew, so a release
of the older call's ``written`` finds nothing of them.

A cast gets a ``Call`` too, without a deadline: the length of the text
it was read from bounds its number of values at the edge
(``text_length``). A caller in the same process (a tool, a test) passes
no ``Call``: no deadline, no length, nothing recorded.
"""

import dataclasses
import datetime
import time

from scheduler import exception


@dataclasses.dataclass(frozen=True)
class Written:
    """One consumer's claim on one provider, as committed."""

    consumer_uuid: str
    provider_id: int
    created_at: datetime.datetime


@dataclasses.dataclass
class Call:
    #: when the caller stops waiting (``time.monotonic()`` seconds), or
    #: None: it waits as long as it takes
    deadline: float = None
    #: the characters of the JSON text the message was read from
    #: (``scheduler.transport.wire.text_length``), or None when not
    #: known (then the edge counts the message's values itself)
    text_length: int = None
    #: the claims committed for the call (``Written``), in commit order
    written: list = dataclasses.field(default_factory=list)

    def check_waited_for(self, consumers):
        """Raise ``CallerGaveUp`` once the deadline passed: a call taken
        up after its caller stopped waiting writes no claim and takes
        over none (``consumers``: the uuids it would claim for)."""
        if self.deadline is None:
            return
        late = time.monotonic() - self.deadline
        if late > 0:
            raise exception.CallerGaveUp(
                late=late, consumers=', '.join(sorted(set(consumers))))

    def wrote(self, pairs, created_at):
        """The claims of ``pairs`` (consumer uuid, provider id) were
        committed, stamped ``created_at``."""
        self.written.extend(Written(consumer, provider, created_at)
                            for consumer, provider in sorted(pairs))
