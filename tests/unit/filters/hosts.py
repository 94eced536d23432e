"""Host tables and requests for the filter and weigher tests.

``table(dict(host='h1', running_vms=3), ...)`` builds a HostTable from
provider dicts whose ``attributes`` are the tracker's ComputeNode fields,
stored exactly as ``scheduler.db.providers.record_compute_node`` stores
them, so plugins see what they see in production.
"""

import numpy as np

from scheduler import objects
from scheduler.db import providers as db_providers
from scheduler.model.request_state import RequestState
from tests.unit import fakes


def provider(provider_id, host=None, **stats):
    """A provider dict; ``stats`` are ComputeNode fields."""
    host = host or 'host%d' % provider_id
    provider = fakes.provider(provider_id, host, **stats)
    provider['attributes'] = db_providers._attributes(
        fakes.compute_node(host, **stats))
    return provider


def table(*hosts):
    """A HostTable with one row per dict of ComputeNode fields (``host``
    names the row)."""
    return fakes.host_table(*(provider(provider_id, **stats)
                              for provider_id, stats in enumerate(hosts, 1)))


def request(extra_specs=None, image=None, hints=None, vcpus=1,
            memory_mb=512):
    spec = fakes.request_spec(vcpus, memory_mb)
    if extra_specs:
        # otherwise left unset, as from_primitives leaves it
        spec.flavor.extra_specs = dict(extra_specs)
    if image is not None:
        spec.image = objects.ImageMeta(**image)
    spec.scheduler_hints = {k: v if isinstance(v, list) else [v]
                            for k, v in (hints or {}).items()}
    return RequestState.from_spec(spec, now=fakes.NOW_TS)


def passing(plugin, host_table, request_state):
    """Names of the hosts ``plugin`` lets through, as the driver runs it."""
    rows = np.arange(host_table.size)
    mask = plugin.mask_for(host_table, request_state, rows)
    return [host_table.hosts[row] for row in rows[mask]]


def weights(weigher, host_table, request_state):
    """{host: raw weight} over every row."""
    rows = np.arange(host_table.size)
    raw = weigher.weigh_all(host_table, rows, request_state)
    return {host_table.hosts[row]: float(w) for row, w in zip(rows, raw)}
