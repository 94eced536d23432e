"""Per-request derived data, computed once before any filter runs.

Plugins read ``RequestState`` rather than re-deriving things from the
RequestSpec in every call (kube-scheduler's CycleState idea). What a plugin
derives itself (a parsed hint, PCI requests, a NUMA topology) it computes
once through ``derived``::

    query = request.derived('json_filter.query', lambda: parse(request))

What a plugin needs from stored data (the hosts of the instances a hint
names ...) its ``preload(request, store)`` hook reads once per planning
attempt; the driver keeps the answer in ``preloaded`` under the plugin's
name, where the plugin finds it (``plugin.preloaded(request)``; see
``scheduler.filters.base``). ``group`` is the driver's own: the request's
server group as placed so far, which the claim enforces too.
"""

import dataclasses
import time

from scheduler.model import resource_classes
from scheduler.model import resource_groups


@dataclasses.dataclass
class RequestState:
    spec: object
    resources: dict
    availability_zone: str = None
    force_hosts: tuple = ()
    force_nodes: tuple = ()
    ignore_hosts: tuple = ()
    tried: frozenset = frozenset()
    requested_destination: object = None
    now: float = 0.0
    is_admin: bool = False
    # the resource groups of one instance (one compute group without
    # RequestSpec.resource_groups) and the locality rules between them
    groups: tuple = ()
    locality: tuple = ()
    # the server group being placed (a GroupPlacement), loaded by the
    # driver before the plugins' preload hooks run
    group: object = None
    # the RPC call being served (``scheduler.model.call.Call``: no claim
    # is written past its deadline; the claims written are added to it),
    # None for an in-process caller
    call: object = None
    # the solver's batch window's joint plan for this request
    # (``scheduler.driver.solver_window``), read by its first planning
    # attempt only; None without a window
    window_hint: object = None
    # plugin name -> what its preload hook returned (None is not kept),
    # replaced at every planning attempt
    preloaded: dict = dataclasses.field(default_factory=dict, repr=False,
                                        compare=False)
    # what plugins derive once per request, see derived()
    _derived: dict = dataclasses.field(default_factory=dict, repr=False,
                                       compare=False)

    @property
    def hints(self):
        return self.spec.get('scheduler_hints') or {}

    def derived(self, key, compute):
        """``compute()`` the first time ``key`` is asked for, then the same
        value for the rest of the request. An exception is not cached."""
        try:
            return self._derived[key]
        except KeyError:
            value = self._derived[key] = compute()
            return value

    @classmethod
    def for_planning(cls, spec, is_admin=False, checked=None, call=None):
        """The state a driver plans ``spec`` with: ``checked``, the state
        the RPC edge's plugin checks built from the same spec (what they
        derived, a parsed hint or an image's wanted properties, is not
        derived again), with ``is_admin`` and a new ``now``; else
        ``from_spec``. ``call``: the RPC call's (``call`` field)."""
        state = checked
        if state is None:
            state = cls.from_spec(spec, is_admin=is_admin)
        else:
            state.is_admin = is_admin
            state.now = time.time()
        state.call = call
        return state

    @classmethod
    def from_spec(cls, spec, is_admin=False, now=None):
        retry = spec.get('retry')
        tried = frozenset(tuple(pair[:2]) for pair in
                          (retry.get('hosts', []) if retry else [])
                          if len(pair) >= 2)
        flavor_resources = resource_classes.request_resources(spec)
        groups = tuple(resource_groups.demands(spec, flavor_resources))
        # the compute group's resources are what the filters check
        compute = [g for g in groups if g.is_compute]
        return cls(
            spec=spec,
            resources=dict(compute[0].resources) if compute else {},
            groups=groups, locality=tuple(spec.get('locality') or ()),
            availability_zone=spec.get('availability_zone'),
            force_hosts=tuple(spec.get('force_hosts') or ()),
            force_nodes=tuple(spec.get('force_nodes') or ()),
            ignore_hosts=tuple(spec.get('ignore_hosts') or ()),
            tried=tried,
            requested_destination=spec.get('requested_destination'),
            now=time.time() if now is None else now,
            is_admin=is_admin,
        )
