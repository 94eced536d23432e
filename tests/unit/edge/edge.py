"""Send a message to an endpoint the way a worker receives it: serialized,
through ``SchedulerDispatcher`` and its edge check, without a transport."""

import types

from oslo_messaging.rpc import dispatcher as rpc_dispatcher

from scheduler import context as sched_context
from scheduler import objects
from scheduler.edge import dispatcher

CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])


def send(endpoint, method, cast=True, version='1.3', ctxt=CTXT, **args):
    """A cast returns None (a refusal is logged by the dispatcher); a
    call returns the deserialized result or raises the exception the
    caller would get back."""
    serializer = objects.SchedulerObjectSerializer()
    worker = dispatcher.SchedulerDispatcher(
        [endpoint], serializer, endpoint.conf.limits, 'test-host',
        recorder=getattr(endpoint, 'recorder', None))
    incoming = types.SimpleNamespace(
        message={'method': method, 'version': version, 'args': {
            name: serializer.serialize_entity(ctxt, value)
            for name, value in args.items()}},
        ctxt=serializer.serialize_context(ctxt),
        reply_q=None if cast else 'reply', client_timeout=None)
    try:
        result = worker.dispatch(incoming)
    except rpc_dispatcher.ExpectedException as wrapped:
        if cast:
            return None
        raise wrapped.exc_info[1]
    return None if cast else serializer.deserialize_entity(ctxt, result)
