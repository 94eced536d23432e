"""NUMATopologyFilter: hosts whose NUMA cells can hold the guest's.

Guest topology, from flavor extra specs:

* ``hw:numa_nodes`` = N: the guest has N cells. Its vCPUs and memory are
  split evenly unless ``hw:numa_cpus.<i>`` (a CPU set such as ``0-3,^2,6``)
  and ``hw:numa_mem.<i>`` (MiB) are given for every cell, covering every
  vCPU exactly once and adding up to the flavor's memory.
* ``hw:cpu_policy`` = ``dedicated`` pins each vCPU to a host CPU; without
  ``hw:numa_nodes`` the guest then has one cell. ``shared`` (the default)
  without ``hw:numa_nodes`` means no topology: every host passes.

Host topology: the tracker's ``numa_topology`` attribute, JSON text::

    {"cells": [{"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 16384,
                "pinned_cpus": [0], "cpu_usage": 2,
                "memory_used_mb": 4096}, ...]}

``cpus`` are the host CPUs of the cell; ``pinned_cpus`` those already
pinned to dedicated guests; ``cpu_usage`` the vCPUs of shared guests
running on the cell; ``memory_used_mb`` the memory guests use. The last
three default to none/0.

A host passes when each guest cell fits a distinct host cell: memory
``memory_used_mb + mem <= memory_mb * ram_allocation_ratio``; dedicated
CPUs ``cpus <= len(cpus - pinned_cpus)``; shared CPUs ``cpus <= len(cpus)``
and ``cpu_usage + cpus <= len(cpus) * cpu_allocation_ratio``. The ratios
are the host's VCPU and MEMORY_MB inventory ratios. A host without a
readable topology fails a guest that has one. Bad extra specs raise
``InvalidField`` naming the spec. Image properties (``hw_numa_nodes``...)
are not read.
"""

import collections
import json

from scheduler import exception
from scheduler import resource_classes as rcs
from scheduler.filters import base

GuestCell = collections.namedtuple('GuestCell', 'cpus memory_mb')
HostCell = collections.namedtuple(
    'HostCell', 'cpus free_pcpus cpu_usage memory_mb memory_used_mb')


def _invalid(key, reason):
    return exception.InvalidField(field='flavor.extra_specs.%s' % key,
                                  reason=reason)


def _cpu_set(key, text):
    """'0-3,^2,6' -> {0, 1, 3, 6}."""
    wanted, excluded = set(), set()
    try:
        for part in (p.strip() for p in text.split(',')):
            target = excluded if part.startswith('^') else wanted
            low, _, high = part.lstrip('^').partition('-')
            target.update(range(int(low), int(high or low) + 1))
    except ValueError:
        raise _invalid(key, 'expected a CPU set like "0-3,^2,6", got %r'
                       % text)
    return wanted - excluded


def _positive_int(key, text):
    try:
        value = int(text)
        if value < 1:
            raise ValueError
    except ValueError:
        raise _invalid(key, 'expected a positive integer, got %r' % text)
    return value


def _explicit_cells(specs, nodes, vcpus, memory_mb):
    cells, seen = [], set()
    for i in range(nodes):
        cpus_key, mem_key = 'hw:numa_cpus.%d' % i, 'hw:numa_mem.%d' % i
        for key in (cpus_key, mem_key):
            if key not in specs:
                raise _invalid(key, 'missing: hw:numa_cpus.N and '
                               'hw:numa_mem.N must be given for every '
                               'cell 0..%d' % (nodes - 1))
        cpus = _cpu_set(cpus_key, specs[cpus_key])
        if cpus & seen or not cpus <= set(range(vcpus)):
            raise _invalid(cpus_key, 'CPU sets must cover vCPUs 0..%d '
                           'exactly once' % (vcpus - 1))
        seen |= cpus
        cells.append(GuestCell(len(cpus),
                               _positive_int(mem_key, specs[mem_key])))
    if len(seen) != vcpus:
        raise _invalid('hw:numa_cpus.0', 'CPU sets cover %d of %d vCPUs'
                       % (len(seen), vcpus))
    if sum(c.memory_mb for c in cells) != memory_mb:
        raise _invalid('hw:numa_mem.0', 'cell memory adds up to %d, the '
                       'flavor has %d MiB' % (
                           sum(c.memory_mb for c in cells), memory_mb))
    return cells


def guest_topology(flavor):
    """(dedicated, [GuestCell]) of ``flavor``, or None without topology."""
    specs = flavor.get('extra_specs') or {}
    policy = specs.get('hw:cpu_policy', 'shared')
    if policy not in ('shared', 'dedicated'):
        raise _invalid('hw:cpu_policy', 'expected shared or dedicated, '
                       'got %r' % policy)
    dedicated = policy == 'dedicated'
    if 'hw:numa_nodes' in specs:
        nodes = _positive_int('hw:numa_nodes', specs['hw:numa_nodes'])
    elif dedicated:
        nodes = 1
    else:
        return None
    vcpus, memory_mb = flavor.vcpus, flavor.memory_mb
    if nodes > vcpus:
        raise _invalid('hw:numa_nodes', '%d cells for %d vCPUs' %
                       (nodes, vcpus))
    if any(k.startswith(('hw:numa_cpus.', 'hw:numa_mem.')) for k in specs):
        return dedicated, _explicit_cells(specs, nodes, vcpus, memory_mb)
    if vcpus % nodes or memory_mb % nodes:
        raise _invalid('hw:numa_nodes', '%d vCPUs and %d MiB do not split '
                       'evenly into %d cells' % (vcpus, memory_mb, nodes))
    return dedicated, [GuestCell(vcpus // nodes, memory_mb // nodes)] * nodes


def host_cells(attributes):
    """[HostCell] from the ``numa_topology`` attribute, or None."""
    try:
        topology = json.loads(attributes.get('numa_topology') or 'null')
        cells = []
        for cell in topology['cells']:
            cpus = set(cell['cpus'])
            cells.append(HostCell(
                len(cpus), len(cpus - set(cell.get('pinned_cpus') or ())),
                float(cell.get('cpu_usage') or 0), float(cell['memory_mb']),
                float(cell.get('memory_used_mb') or 0)))
        return cells or None
    except (TypeError, ValueError, KeyError):
        return None


def _assign(guest, cells, fits, used=frozenset()):
    """True if guest cells fit distinct host cells (backtracking)."""
    if not guest:
        return True
    for i, cell in enumerate(cells):
        if i not in used and fits(guest[0], cell) and \
                _assign(guest[1:], cells, fits, used | {i}):
            return True
    return False


class NUMATopologyFilter(base.BaseFilter):

    @staticmethod
    def _guest(request):
        return request.derived(
            'numa_topology.guest',
            lambda: guest_topology(request.spec.flavor))

    def applies_to(self, request):
        return self._guest(request) is not None

    def host_passes(self, host, request):
        dedicated, guest = self._guest(request)
        cells = host_cells(host.attributes)
        if cells is None:
            return False
        cpu_ratio = host.allocation_ratio(rcs.VCPU) or 1.0
        ram_ratio = host.allocation_ratio(rcs.MEMORY_MB) or 1.0

        def fits(want, cell):
            if cell.memory_used_mb + want.memory_mb > \
                    cell.memory_mb * ram_ratio:
                return False
            if dedicated:
                return want.cpus <= cell.free_pcpus
            return (want.cpus <= cell.cpus and
                    cell.cpu_usage + want.cpus <= cell.cpus * cpu_ratio)

        biggest_first = sorted(guest, key=lambda c: (c.cpus, c.memory_mb),
                               reverse=True)
        return _assign(biggest_first, cells, fits)
