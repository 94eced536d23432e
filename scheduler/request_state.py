"""Per-request derived data, computed once before any filter runs.

Plugins read ``RequestState`` rather than re-deriving things from the
RequestSpec in every call (kube-scheduler's CycleState idea).
"""

import dataclasses
import time

from scheduler import resource_classes


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

    @classmethod
    def from_spec(cls, spec, is_admin=False, now=None):
        retry = spec.get('retry')
        tried = frozenset(tuple(pair[:2]) for pair in
                          (retry.get('hosts', []) if retry else [])
                          if len(pair) >= 2)
        return cls(
            spec=spec,
            resources=resource_classes.flavor_resources(spec.flavor),
            availability_zone=spec.get('availability_zone'),
            force_hosts=tuple(spec.get('force_hosts') or ()),
            force_nodes=tuple(spec.get('force_nodes') or ()),
            ignore_hosts=tuple(spec.get('ignore_hosts') or ()),
            tried=tried,
            requested_destination=spec.get('requested_destination'),
            now=time.time() if now is None else now,
            is_admin=is_admin,
        )
