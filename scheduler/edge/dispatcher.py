"""The RPC dispatcher of a worker: every message gets a clear answer.

``SchedulerDispatcher`` is oslo.messaging's ``RPCDispatcher`` with these
additions, so that no input and no database outage reaches a caller or the
log as a traceback:

* only the RPC methods can be called (``RPCMethods``, an oslo.messaging
  access policy): the methods of ``scheduler.edge.schemas.METHODS``, each
  behind its policy rule; any other name (``conf``, ``stop``,
  ``target``, ``__init__``, ``_private`` ...) is an unknown method;
* the envelope is checked first: the method name, the version and the
  context (``validation.EdgeCheck.check_context``: what oslo.log writes
  of it into every line follows the name rule, nothing holds invalid
  unicode);
* every message is checked once, here, before the manager's method runs
  (``validation.EdgeCheck``): its raw arguments against the names the
  method takes, then in one pass of the validator against the method's
  JSON Schema for the message's version (``scheduler.edge.schemas``)
  and the ``[limits]`` options (the number of values by the length of
  the text the transport read the message from, the ``Call``'s
  ``text_length``), a
  nova RequestSpec once read (``scheduler.edge.arguments``), and a request
  against the enabled plugins' own checks (the hints and extra specs a
  filter owns: ``request_checks`` of the endpoint). Policy is evaluated
  once, here, before the arguments are read (``policy.authorized``: the
  manager's method is called without its own ``authorize`` check); a
  caller the policy refuses learns nothing of its arguments;
* ``InvalidRequest`` (raised by the edge check or the serializer) is an
  expected exception: a call gets it back, a cast is dropped with one
  warning naming the method and the field (values in it cut to a few
  hundred characters, ``scheduler.exception.cut``);
* an unknown method or an unsupported version is answered with
  ``InvalidRequest`` listing what this worker serves;
* a database outage is answered with ``DatabaseUnavailable``, logged
  once when it starts and once when it ends with the number of requests
  so answered (``scheduler.db.outages.RequestOutage``); any other
  database error with ``DatabaseError`` carrying an error id; the
  statement, its parameters and the driver's message go to the log only;
* any other fault is answered ``InternalError`` carrying an error id (its
  traceback is in the log): no traceback or file path reaches a caller.
  A cast's ``ReportNotStored`` is raised on, for the report topic's
  server to have the broker deliver it again
  (``scheduler.rpc.late_ack.ReportServer``);
* call-monitor heartbeats of every running call come from one thread per
  worker (``scheduler.edge.call_monitor``), not from a thread started and
  joined per call; the endpoint is found as oslo.messaging finds it, less
  the thread and event it builds for every message (``_route``).
"""

import typing
import uuid

import sqlalchemy.exc as sa_exc
from oslo_db import exception as db_exc
import oslo_messaging
from oslo_log import log as logging
from oslo_messaging.rpc import dispatcher as rpc_dispatcher
from oslo_utils import versionutils

from scheduler.edge import call_monitor
from scheduler import exception
from scheduler.db import outages
from scheduler.model import call as model_call
from scheduler.edge import arguments
from scheduler.edge import request as edge_request
from scheduler.edge import policy
from scheduler.edge import schemas
from scheduler.edge import validation

LOG = logging.getLogger(__name__)

_DB_ERRORS = (db_exc.DBError, sa_exc.SQLAlchemyError)


def _expected(exc):
    """Raise ``exc`` as an answer to the caller, not as a fault."""
    wrapped = rpc_dispatcher.ExpectedException()
    wrapped.exc_info = _answer(exc)
    raise wrapped


def _answer(exc):
    """exc_info that oslo.messaging sends back as the exception and its
    message only: an answer carries no server traceback and no chained
    exception (which, for a database error, would hold the SQL)."""
    exc.__suppress_context__ = True
    exc.__cause__ = None
    return type(exc), exc, None


#: the driver's message in a database error's log line (it holds the
#: statement and its parameters, which may echo a caller's values)
_DETAIL_LENGTH = 2000


def translate_db_error(exc, method, host, outage=None):
    """The exception a caller sees for database error ``exc``; an outage
    is counted by ``outage`` (a ``RequestOutage``), which logs it."""
    if outages.is_outage(exc):
        if outage is None:
            LOG.warning('%s: database unreachable: %s', method,
                        outages.summary(exc))
        else:
            outage.refused(exc, method)
        return exception.DatabaseUnavailable(service='database', url='',
                                             reason='unreachable')
    error_id = uuid.uuid4().hex[:12]
    # the only place the statement and parameters are written
    LOG.error('%s: database error %s: %s', method, error_id,
              exception.cut(str(exc).replace('\n', ' '), _DETAIL_LENGTH))
    return exception.DatabaseError(host=host, error_id=error_id)


class RPCMethods(rpc_dispatcher.RPCAccessPolicyBase):
    """oslo.messaging access policy: the RPC methods only (module doc);
    oslo.messaging's own ping, if an operator enabled it."""

    def is_allowed(self, endpoint, method):
        return method in schemas.METHODS or isinstance(
            endpoint, rpc_dispatcher.PingEndpoint)


def _shown(method):
    """``method`` as a log line or an answer shows it."""
    if isinstance(method, str) and method in schemas.METHODS:
        return method
    return exception.echo(method, 80)


class SchedulerDispatcher(rpc_dispatcher.RPCDispatcher):
    """See the module docstring. ``limits`` is ``conf.limits``."""

    def __init__(self, endpoints, serializer, limits, host, recorder=None):
        super().__init__(endpoints, serializer, access_policy=RPCMethods)
        self.limits = limits
        self.host = host
        self.edge = validation.EdgeCheck(limits)
        self.outage = outages.requests_of(
            endpoints[0] if endpoints else self, LOG)
        self._monitor = call_monitor.CallMonitor()
        # RPC errors by method and exception, in the worker's metrics
        # (``scheduler.driver.decision_recorder``), if given
        self._recorder = recorder

    def dispatch(self, incoming, call=None):
        """Serve ``incoming``; ``call`` (a ``scheduler.model.call.Call``)
        is the server's record of it (its deadline; the claims written
        for it), None from oslo.messaging's own server."""
        if call is None:     # no deadline known: oslo.messaging's server
            call = model_call.Call()
        # the monitor sends the call's heartbeats (``_route`` never runs
        # oslo.messaging's dispatch, which would start a thread for them)
        watch = self._monitor.watch(incoming)
        try:
            return self._dispatch(incoming, call)
        finally:
            self._monitor.done(watch)

    def _dispatch(self, incoming, call):
        try:
            return self._dispatch_checked(incoming, call)
        except rpc_dispatcher.ExpectedException as wrapped:
            if self._recorder is not None:
                # a metric label per RPC method, not per name sent
                method = incoming.message.get('method')
                self._recorder.rpc_error(
                    method if isinstance(method, str)
                    and method in schemas.METHODS else '(unknown)',
                    type(wrapped.exc_info[1]).__name__)
            raise

    def _dispatch_checked(self, incoming, call):
        method = incoming.message.get('method')
        # a cast has no reply queue (oslo.messaging's AMQP drivers)
        is_cast = not getattr(incoming, 'reply_q', None)
        try:
            self.edge.check_envelope(
                method, incoming.message.get('version', '1.0'),
                incoming.ctxt, call.text_length)
            result = self._route(incoming, call)
        except rpc_dispatcher.ExpectedException as wrapped:
            self._answered(wrapped, method, is_cast)
            raise
        except rpc_dispatcher.NoSuchMethod:
            self._refuse(method, is_cast, 'no such method; this scheduler '
                         'serves: %s' % ', '.join(self._methods()))
        except rpc_dispatcher.UnsupportedVersion as exc:
            self._refuse(method, is_cast, 'version %s is not supported; '
                         'this scheduler serves 1.0 to %s' %
                         (exc.version, self._version()))
        except exception.InvalidRequest as exc:
            self._rejected(method, is_cast, exc)
            _expected(exc)
        except _DB_ERRORS as exc:
            _expected(translate_db_error(exc, _shown(method), self.host,
                                         self.outage))
        except exception.ReportNotStored as exc:
            if is_cast:
                raise       # the report topic's server redelivers it
            _expected(exc)
        except Exception:
            _expected(self._fault(method))
        self.outage.answered()
        return result

    def _route(self, incoming, call):
        """oslo.messaging's ``dispatch``: the endpoint whose target takes
        the message's namespace and version and has the method, behind
        the access policy. Without the thread and event oslo.messaging
        builds for every message (and starts only for a caller's
        timeout): the call monitor sends the heartbeats
        (``dispatch``)."""
        message = incoming.message
        method = message.get('method')
        namespace = message.get('namespace')
        version = message.get('version', '1.0')
        compatible = False
        for endpoint in self.endpoints:
            if not _serves(endpoint, namespace, version):
                continue
            if hasattr(endpoint, method) and self.access_policy.is_allowed(
                    endpoint, method):
                return self._call_endpoint(endpoint, method, incoming, call)
            compatible = True
        if compatible:
            raise rpc_dispatcher.NoSuchMethod(method)
        raise rpc_dispatcher.UnsupportedVersion(version, method=method)

    def _answered(self, wrapped, method, is_cast):
        """An expected exception: sent without traceback, a refusal
        logged once."""
        error = wrapped.exc_info[1]
        wrapped.exc_info = _answer(error)
        if isinstance(error, exception.InvalidRequest):
            self._rejected(method, is_cast, error)

    @staticmethod
    def _rejected(method, is_cast, error):
        log = LOG.warning if is_cast else LOG.info
        # 'Rejected <method>': what operators grep for, whichever
        # step refused the message
        log('Rejected %s (%s): %s', _shown(method),
            'cast' if is_cast else 'call', error)

    def _fault(self, method):
        """The answer to a fault that is not the caller's: its traceback
        goes to the log only."""
        error_id = uuid.uuid4().hex[:12]
        LOG.exception('%s: internal error %s', _shown(method), error_id)
        return exception.InternalError(method=_shown(method),
                                       host=self.host, error_id=error_id)

    def _refuse(self, method, is_cast, reason):
        error = exception.InvalidField(field='method %s' % _shown(method),
                                       reason=reason)
        self._rejected(method, is_cast, error)
        _expected(error)

    def _methods(self):
        """The RPC methods the endpoints serve."""
        return sorted({name for endpoint in self.endpoints
                       for name in schemas.METHODS
                       if callable(getattr(endpoint, name, None))})

    def _version(self):
        return max((e.target.version for e in self.endpoints
                    if getattr(e, 'target', None)), default='1.0')

    def _call_endpoint(self, endpoint, method, incoming, call):
        try:
            return self._checked_call(endpoint, method, incoming.ctxt,
                                      incoming.message.get('args', {}),
                                      _Envelope(incoming.message.get(
                                          'version'), call))
        except exception.InvalidRequest as exc:
            _expected(exc)

    def _checked_call(self, endpoint, method, ctxt, args, envelope):
        """What oslo.messaging's dispatcher does with a message, with the
        edge check (module docstring) between deserializing and
        calling."""
        version = envelope.version
        if method not in schemas.METHODS:
            ctxt = self.serializer.deserialize_context(ctxt)
            return self._serialized(ctxt, getattr(endpoint, method)(
                ctxt, **self._entities(ctxt, args)))
        ctxt = self.serializer.deserialize_context(ctxt)
        guarded = hasattr(endpoint, 'conf')
        if guarded:
            # policy, once: a refused caller is answered before its
            # arguments are read or checked
            policy.enforce(endpoint, ctxt, method)
        # the names of the arguments whose schema waits for their reading
        read_first = self.edge.check_message(method, version, args,
                                             envelope.call.text_length)
        args = self._entities(ctxt, args)
        args = arguments.read(method, args, received=True)
        self.edge.check_arguments(method, version, args, read_first)
        checked = _plugin_checks(endpoint, method, args)
        serve = getattr(endpoint, 'serve', None)
        if serve is not None:
            # the manager takes what was read, checked and authorized
            # here whole (``edge_request``), and reads nothing again
            return self._serialized(ctxt, serve(edge_request.EdgeRequest(
                method, ctxt, args, checked, envelope.call)))
        # an endpoint of the API without ``serve`` (a test's): its
        # method less the ``authorize`` check made above
        func = (policy.unchecked(endpoint, method) if guarded
                else getattr(endpoint, method))
        return self._serialized(ctxt, func(ctxt, **args))

    def _entities(self, ctxt, args):
        return {name: self.serializer.deserialize_entity(ctxt, value)
                for name, value in args.items()}

    def _serialized(self, ctxt, result):
        return self.serializer.serialize_entity(ctxt, result)


class _Envelope(typing.NamedTuple):
    """What ``_checked_call`` needs of a message besides its context and
    arguments."""

    #: the message's version (None: the caller sent none)
    version: str
    #: the server's record of the call (``scheduler.model.call.Call``)
    call: object


#: the target of an endpoint that names none (oslo.messaging's default)
_DEFAULT_TARGET = oslo_messaging.Target()


def _serves(endpoint, namespace, version):
    """Does ``endpoint`` take messages of ``namespace`` at ``version``,
    as oslo.messaging's dispatcher decides it: the namespace is one its
    target accepts, and the version has the target's major and at most
    its minor."""
    target = getattr(endpoint, 'target', None) or _DEFAULT_TARGET
    return (namespace in target.accepted_namespaces and
            versionutils.is_compatible(version, target.version or '1.0',
                                       same_major=True))


def _plugin_checks(endpoint, method, args):
    """The plugins' own checks of a request (a hint or an extra spec a
    filter owns), which the endpoint carries as ``request_checks``
    (``scheduler.driver.plugins.RequestChecks``); after the schema, so
    they read a request whose shape is known."""
    checks = getattr(endpoint, 'request_checks', None)
    if checks is not None and method == 'select_destinations':
        return checks(args['spec_obj'])
    return None
