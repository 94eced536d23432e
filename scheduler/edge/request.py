"""One message as the RPC edge read it, handed to the manager whole.

The edge (``scheduler.edge.dispatcher``, and nova's API in
``scheduler.nova.endpoint``) reads a message's arguments once
(``scheduler.edge.arguments``), checks them once (the schemas, the
plugins' own checks) and evaluates policy once; ``EdgeRequest`` carries
the result, with the call's deadline, to ``SchedulerManager.serve``,
which reads nothing again and passes what the plugins' checks derived
(a ``RequestState``) and the deadline on to the driver as arguments.
Nothing is left on the arguments themselves.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class EdgeRequest:
    #: the RPC method, one of ``scheduler.edge.schemas.METHODS``
    method: str
    #: the caller's context, deserialized
    context: object
    #: the arguments as the manager's method takes them, read and checked
    args: dict
    #: what the plugins' checks of a ``select_destinations`` derived
    #: (``scheduler.model.request_state.RequestState``), or None
    checked: object = None
    #: the RPC call (``scheduler.model.call.Call``), or None for a caller
    #: in the same process
    call: object = None
