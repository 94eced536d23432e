"""The built-in first step: force_hosts, force_nodes, ignore_hosts,
requested_destination and hosts already tried (RequestSpec.retry)."""

import numpy as np


def _rows(table, names, by_node=False):
    rows = []
    of = table.rows_of_node if by_node else table.rows_of_host
    for name in names:
        rows.extend(of(name))
    return rows


def requested_hosts_mask(table, request):
    """Mask of rows the request allows before any filter runs."""
    n = table.size
    mask = np.ones(n, dtype=bool)
    if request.force_hosts or request.force_nodes:
        forced = np.zeros(n, dtype=bool)
        if request.force_hosts:
            forced[_rows(table, request.force_hosts)] = True
        if request.force_nodes:
            by_node = np.zeros(n, dtype=bool)
            by_node[_rows(table, request.force_nodes, by_node=True)] = True
            forced = by_node if not request.force_hosts else forced & by_node
        mask &= forced
    destination = request.requested_destination
    if destination is not None:
        wanted = np.zeros(n, dtype=bool)
        for row in table.rows_of_host(destination.host):
            node = destination.get('node')
            if node is None or table.nodenames[row] == node:
                wanted[row] = True
        mask &= wanted
    if request.ignore_hosts:
        mask[_rows(table, request.ignore_hosts)] = False
    for host, node in request.tried:
        for row in table.rows_of_host(host):
            if table.nodenames[row] == node:
                mask[row] = False
    return mask
