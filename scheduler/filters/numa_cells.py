"""Host NUMA cells as trackers report them, and whether a guest cell fits.

Host topology: the tracker's ``numa_topology`` attribute, JSON text (nova's
own NUMA topology JSON is read into this shape when the report arrives,
``scheduler.objects.nova_compat``)::

    {"cells": [{"id": 0, "cpus": [0, 1, 2, 3], "pcpus": [4, 5, 6, 7],
                "memory_mb": 16384, "pinned_cpus": [4], "cpu_usage": 2,
                "memory_used_mb": 4096, "siblings": [[0, 8], [4, 12]],
                "mempages": [{"size_kb": 4, "total": 4194304, "used": 0,
                              "reserved": 0},
                             {"size_kb": 2048, "total": 1024, "used": 0,
                              "reserved": 0}],
                "socket": 0}, ...]}

``cpus`` are the cell's host CPUs for shared vCPUs (nova's
``cpu_shared_set``), ``pcpus`` those for pinned ones
(``cpu_dedicated_set``; without it, ``cpus`` serve both, as before nova
split them); ``pinned_cpus`` the pCPUs already pinned; ``cpu_usage`` the
shared vCPUs running on the cell; ``siblings`` the SMT thread sets;
``mempages`` the page pools of the cell. All but ``id``, ``cpus`` and
``memory_mb`` are optional.

``cells_of(host)`` is a host view's cells, parsed once per report of the
host (``HostView.derived``), not per request; ``cell_count(table)`` their
number per row, a numpy column kept by the table as hosts report (0: no
readable topology), for a vectorized pre-check.

``fits(guest_cell, host_cell, limits)`` is the one NUMA cell fit, as nova's
``_numa_fit_instance_cell`` decides it:

* memory: with a page size (``hw:mem_page_size``), enough free pages of
  the chosen size (``small``: the smallest; ``large``: the largest that
  fits, never the smallest; ``any``: large first, then small; a size: that
  one), the memory a multiple of the page; without one, the memory within
  the cell (its small pages if it reports pools) and, ratio applied,
  ``memory_used_mb + memory <= memory_mb * ram_allocation_ratio``;
* shared vCPUs: no more than ``len(cpus)``, and ``cpu_usage + vcpus <=
  len(cpus) * cpu_allocation_ratio``;
* pinned vCPUs (and the emulator threads' pCPU of
  ``hw:emulator_threads_policy=isolate``), on free ``pcpus``: ``prefer``
  any; ``isolate`` one whole free core each; ``require`` thread siblings
  of free cores, on SMT hosts only.
"""

import collections
import json

HostCell = collections.namedtuple(
    'HostCell', 'id cpus pcpus pinned cpu_usage memory_mb memory_used_mb '
    'cores mempages socket')
GuestCell = collections.namedtuple(
    'GuestCell', 'shared dedicated memory_mb thread_policy page_size '
    'emulator_pcpus')
Limits = collections.namedtuple('Limits', 'cpu_ratio ram_ratio')


def _cores(cell, pcpus):
    """Thread sibling sets within ``pcpus`` (one set per core)."""
    cores = [frozenset(s) & pcpus for s in cell.get('siblings') or ()]
    cores = [c for c in cores if c]
    covered = frozenset().union(*cores) if cores else frozenset()
    return cores + [frozenset([cpu]) for cpu in pcpus - covered]


def _host_cell(cell):
    cpus = frozenset(cell['cpus'])
    pcpus = frozenset(cell['pcpus'] if 'pcpus' in cell else cell['cpus'])
    pages = tuple(sorted(
        (int(p['size_kb']), int(p['total']),
         int(p.get('used') or 0) + int(p.get('reserved') or 0))
        for p in cell.get('mempages') or ()))
    return HostCell(
        int(cell['id']), cpus, pcpus, frozenset(cell.get('pinned_cpus') or ()),
        float(cell.get('cpu_usage') or 0), float(cell['memory_mb']),
        float(cell.get('memory_used_mb') or 0), _cores(cell, pcpus), pages,
        cell.get('socket'))


def host_cells(attributes):
    """(HostCell, ...) from the ``numa_topology`` attribute, or None."""
    try:
        topology = json.loads(attributes.get('numa_topology') or 'null')
        return tuple(_host_cell(cell) for cell in topology['cells']) or None
    except (TypeError, ValueError, KeyError, AttributeError):
        return None


def cells_of(host):
    """``host_cells`` of a HostView, once per change of its row."""
    return host.derived('numa_cells', host_cells)


def _count(attributes):
    return len(host_cells(attributes) or ())


def cell_count(table):
    """Number of readable NUMA cells of every row (float column)."""
    return table.column('numa_cells', 0.0, derive=_count)


def _pages_fit(pages, size_kb, memory_kb, use_free=True):
    for size, total, used in pages:
        if size == size_kb:
            free = total - used if use_free else total
            return memory_kb % size_kb == 0 and free * size_kb >= memory_kb
    return False


def _page_size_fits(guest, host):
    if not host.mempages:
        return False
    memory_kb = guest.memory_mb * 1024
    sizes = [size for size, _, _ in host.mempages]
    wanted = guest.page_size
    if wanted == 'small':
        candidates = sizes[:1]
    elif wanted == 'large':
        candidates = sizes[1:][::-1]
    elif wanted == 'any':
        candidates = sizes[1:][::-1] + sizes[:1]
    else:
        candidates = [wanted]
    return any(_pages_fit(host.mempages, size, memory_kb)
               for size in candidates)


def _memory_fits(guest, host, limits):
    if guest.page_size is not None:
        # huge pages are never overcommitted
        return _page_size_fits(guest, host)
    if host.mempages:
        smallest = host.mempages[0][0]
        if not _pages_fit(host.mempages, smallest, guest.memory_mb * 1024,
                          use_free=False):
            return False
    elif guest.memory_mb > host.memory_mb:
        return False  # a guest never overcommits against itself
    return (host.memory_used_mb + guest.memory_mb
            <= host.memory_mb * limits.ram_ratio)


def _pinning_fits(guest, host):
    wanted = len(guest.dedicated) + guest.emulator_pcpus
    if not wanted:
        return True
    if wanted > len(host.pcpus):
        return False
    free_per_core = [core - host.pinned for core in host.cores]
    smt = any(len(core) > 1 for core in host.cores)
    if guest.thread_policy == 'isolate':
        whole = sum(1 for core, free in zip(host.cores, free_per_core)
                    if free == core)
        return whole >= wanted
    if guest.thread_policy == 'require':
        return smt and sum(len(free) for free in free_per_core
                           if len(free) > 1) >= wanted
    return sum(len(free) for free in free_per_core) >= wanted


def fits(guest, host, limits):
    """Whether GuestCell ``guest`` fits HostCell ``host`` (module doc)."""
    if not _memory_fits(guest, host, limits):
        return False
    shared = len(guest.shared)
    if shared and (shared > len(host.cpus) or host.cpu_usage + shared
                   > len(host.cpus) * limits.cpu_ratio):
        return False
    return _pinning_fits(guest, host)
