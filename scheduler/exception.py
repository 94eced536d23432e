"""Exceptions the scheduler raises, including those that cross RPC.

Exceptions that are answers rather than faults (``NoValidHost``,
``InvalidRequest``) are declared with ``oslo_messaging.expected_exceptions``
on the server. Clients allow this module in ``allowed_remote_exmods``, so
the caller catches the same class (``scheduler.exception.NoValidHost``).

Every exception is built from keyword arguments only, and keeps them in
``kwargs``: oslo.messaging rebuilds a remote exception as
``cls(*args, **kwargs)``, so they must be JSON-serializable.

A caller's value is echoed into an answer or a log line cut to
``ECHO_LENGTH`` characters (``echo``): ``InvalidRequest`` and
``Forbidden`` cut their text arguments and their message, so no refusal
sends back, or writes to the log, more than a few hundred characters of
what it refuses.
"""

import oslo_messaging

#: how much of a caller's value an answer or a log line repeats
ECHO_LENGTH = 200
_CUT = ' ...[%d characters]'


def cut(text, limit=ECHO_LENGTH):
    """``text`` cut to about ``limit`` characters, saying its length."""
    if len(text) <= limit:
        return text
    return text[:limit] + _CUT % len(text)


def echo(value, limit=ECHO_LENGTH):
    """``repr(value)`` cut (``cut``); a huge container is not formatted
    whole first (its repr is bounded by the items it shows)."""
    if isinstance(value, (list, tuple, dict, set)) and len(value) > 16:
        return '<%s of %d items>' % (type(value).__name__, len(value))
    return cut(repr(value), limit)


class SchedulerException(Exception):
    """Base class: ``msg_fmt`` formatted with the keyword arguments."""

    msg_fmt = 'An unknown scheduler error occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self.msg_fmt
        self.message = message
        super().__init__(message)

    def __str__(self):
        return self.message


class NoValidHost(SchedulerException):
    """No host could take the request; ``reason`` says why.

    ``diagnosis`` is structured: a list of ``{"filter", "hosts_in",
    "hosts_out", "detail"}`` steps plus claim conflicts, suitable for
    programs; ``reason`` is its human-readable summary.
    """

    msg_fmt = 'No valid host was found. %(reason)s'

    def __init__(self, message=None, reason='', diagnosis=None, **kwargs):
        super().__init__(message, reason=reason, diagnosis=diagnosis,
                         **kwargs)
        self.reason = reason
        self.diagnosis = diagnosis or {}


class _Echoing(SchedulerException):
    """An exception repeating what a caller sent: its text arguments
    and its message are cut (``cut``)."""

    def __init__(self, message=None, **kwargs):
        kwargs = {key: cut(value) if isinstance(value, str) else value
                  for key, value in kwargs.items()}
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self.msg_fmt
        super().__init__(cut(str(message), 3 * ECHO_LENGTH), **kwargs)


class InvalidRequest(_Echoing):
    """The caller sent something the scheduler cannot accept.

    Text arguments (``field``, ``reason`` ...) and the message are cut:
    they may repeat what the caller sent."""

    msg_fmt = 'Invalid request: %(reason)s'


class InvalidField(InvalidRequest, ValueError):
    """A named field had a wrong type or value (also a ``ValueError``)."""

    msg_fmt = 'Invalid value for field %(field)s: %(reason)s'


class ConfigInvalid(SchedulerException):
    """A configuration value or the transport URL cannot be used."""

    msg_fmt = 'Invalid configuration: %(reason)s'


class Forbidden(_Echoing):
    """The caller's context does not pass the policy rule of the method.

    ``rule`` names the oslo.policy rule (``scheduler:<method>``); an
    operator grants it with a role or changes it in the policy file. The
    caller's roles are repeated cut.
    """

    msg_fmt = ('Policy does not allow %(rule)s for this caller (roles: '
               '%(roles)s); it needs a context that passes "%(check)s"')


class InvalidPolicy(SchedulerException):
    """The operator's policy file cannot be used (start-up check)."""

    msg_fmt = 'Invalid policy file %(path)s: %(reason)s'


class PluginLoadError(SchedulerException):
    """The configured filter or weigher pipeline is invalid."""

    msg_fmt = 'Invalid scheduler plugin configuration: %(reason)s'


class ClaimConflict(SchedulerException):
    """Another worker claimed the capacity first; re-plan and retry."""

    msg_fmt = ('Claim on provider %(provider)s for %(resource_class)s lost '
               'a race or no longer fits')


class CallerGaveUp(SchedulerException):
    """The caller of a call stopped waiting before its claims were
    written: nothing is claimed for it, and no answer reaches anyone (a
    worker that was cut off the network, or stalled, takes up a call
    long after its caller's RPC timeout, when another worker may have
    answered it since)."""

    msg_fmt = ('The caller stopped waiting %(late).1f s ago; nothing was '
               'claimed for %(consumers)s')


class GroupPolicyConflict(ClaimConflict):
    """Placing these members would break their server group's policy."""

    msg_fmt = ('Server group %(group)s (%(policy)s) would be broken on '
               '%(hosts)s')


class ProviderNotFound(SchedulerException):
    msg_fmt = 'No provider named %(name)s'


class ServiceUnavailable(SchedulerException):
    """A required service (broker, database) cannot be reached."""

    msg_fmt = '%(service)s unreachable at %(url)s: %(reason)s'


class DatabaseUnavailable(ServiceUnavailable):
    """The database could not be reached; nothing was changed. Retry.

    Deliberately without the driver's message, SQL or parameters: those
    go to the worker's log only (issue 13, point 2a).
    """

    msg_fmt = ('The scheduler database is unreachable; the request was not '
               'carried out. Retry later.')


class DatabaseError(SchedulerException):
    """A database error other than an outage; details are in the log."""

    msg_fmt = ('The scheduler could not complete the request because of a '
               'database error (details in the log of %(host)s, '
               'error id %(error_id)s).')


class InternalError(SchedulerException):
    """A fault of the scheduler itself; its traceback is in the log."""

    msg_fmt = ('The scheduler could not complete %(method)s because of an '
               'internal error (details in the log of %(host)s, error id '
               '%(error_id)s).')


class ReportNotStored(SchedulerException):
    """A tracker report was not committed (write failed or timed out); the
    report topic's server then has the broker deliver it again once."""

    msg_fmt = 'The report of %(host)s/%(node)s was not stored: %(reason)s'


class SchedulerUnavailable(ServiceUnavailable,
                           oslo_messaging.MessagingTimeout):
    """No scheduler worker answered a call in time (the client raises it
    for oslo.messaging's ``MessagingTimeout``).

    The worker may have died mid-call (SIGKILL, OOM) or none may be
    serving. A claim the dead worker wrote is released by every worker's
    claim sweeper once ``grace`` seconds (``[scheduler]
    unconfirmed_claim_grace_period``) have passed; the caller retries.
    Also a ``MessagingTimeout``, for callers written against earlier
    releases that caught that.
    """

    msg_fmt = ('No scheduler worker answered %(method)s within '
               '%(seconds).1f s (worker died, none serving, or the broker '
               'is unreachable); nothing was returned. Retry: a claim '
               'written for this request, if any, is released after '
               '%(grace)d s ([scheduler] unconfirmed_claim_grace_period).')


class MessageTooLarge(InvalidField):
    """A message is larger than ``[limits] max_message_bytes``; refused by
    the client before it is sent (the broker would refuse it too)."""

    msg_fmt = ('Invalid value for field %(field)s: the %(method)s message '
               'would be %(size)d bytes, more than [limits] '
               'max_message_bytes (%(limit)d)')
