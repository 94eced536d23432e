"""NUMATopologyFilter: hosts whose NUMA cells can hold the guest's.

Guest topology, from flavor extra specs (or the image properties of the
same names, ``hw_numa_nodes``..., when the flavor does not set them):

* ``hw:numa_nodes`` = N: the guest has N cells. Its vCPUs and memory are
  split evenly unless ``hw:numa_cpus.<i>`` (a CPU set such as ``0-3,^2,6``)
  and ``hw:numa_mem.<i>`` (MiB) are given for every cell, covering every
  vCPU exactly once and adding up to the flavor's memory.
* ``hw:cpu_policy`` = ``dedicated`` (or ``mixed``), or ``hw:mem_page_size``:
  without ``hw:numa_nodes`` the guest has one cell. ``dedicated`` pins
  every vCPU to a host CPU, ``mixed`` those of ``hw:cpu_dedicated_mask``;
  ``hw:cpu_thread_policy`` says how pinned vCPUs use SMT threads
  (``scheduler.model.cpu_policy``), ``hw:emulator_threads_policy=isolate``
  pins the emulator threads to one more pCPU. Neither: no topology, every
  host passes.

A host passes when each guest cell fits a distinct host cell
(``numa_cells.fits``: memory or huge pages, shared vCPUs within the
allocation ratio, pinned vCPUs on free dedicated CPUs) and, for a flavor
with PCI devices, the devices can be found with each alias's NUMA
affinity policy on the cells chosen (``pci.can_satisfy``). The ratios are
the host's VCPU and MEMORY_MB inventory ratios. A host without a readable
topology fails a guest that has one. Bad extra specs raise
``InvalidField`` naming the spec.

What is decided here, on the host view, is the cell each guest cell goes
to, huge pages per cell and PCI NUMA affinity; the claim re-checks the
host-wide amounts (VCPU, PCPU, MEMORY_MB) atomically, not the cells.
"""

from scheduler.model import cpu_policy
from scheduler import exception
from scheduler.model import pci
from scheduler.model import resource_classes as rcs
from scheduler.filters import base
from scheduler.filters import numa_cells


def _invalid(key, reason):
    return exception.InvalidField(field='flavor.extra_specs.%s' % key,
                                  reason=reason)


def _cpu_set(key, text):
    """'0-3,^2,6' -> {0, 1, 3, 6}."""
    cpus = cpu_policy.cpu_set('flavor.extra_specs.%s' % key, text)
    if isinstance(cpus, tuple):
        raise _invalid(key, 'expected a CPU set like "0-3,^2,6", got %r'
                       % text)
    return cpus


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
        cells.append((cpus, _positive_int(mem_key, specs[mem_key])))
    if len(seen) != vcpus:
        raise _invalid('hw:numa_cpus.0', 'CPU sets cover %d of %d vCPUs'
                       % (len(seen), vcpus))
    if sum(mem for _, mem in cells) != memory_mb:
        raise _invalid('hw:numa_mem.0', 'cell memory adds up to %d, the '
                       'flavor has %d MiB' % (
                           sum(mem for _, mem in cells), memory_mb))
    return cells


def _node_count(spec, cpus):
    field, nodes = cpu_policy.setting(spec, 'numa_nodes')
    if nodes is not None:
        try:
            return _positive_int('hw:numa_nodes', nodes)
        except exception.InvalidField as exc:
            # name the image property when that is where it came from
            raise exception.InvalidField(field=field,
                                         reason=exc.kwargs['reason'])
    if cpus.policy != 'shared' or cpus.page_size is not None:
        return 1
    return None


def _split(specs, nodes, vcpus, memory_mb):
    """[(vCPU indexes, MiB)] per guest cell."""
    if any(k.startswith(('hw:numa_cpus.', 'hw:numa_mem.')) for k in specs):
        return _explicit_cells(specs, nodes, vcpus, memory_mb)
    if vcpus % nodes or memory_mb % nodes:
        raise _invalid('hw:numa_nodes', '%d vCPUs and %d MiB do not split '
                       'evenly into %d cells' % (vcpus, memory_mb, nodes))
    per_cell = vcpus // nodes
    return [(set(range(i * per_cell, (i + 1) * per_cell)),
             memory_mb // nodes) for i in range(nodes)]


def guest_topology(spec):
    """[numa_cells.GuestCell] of RequestSpec ``spec``, or None."""
    cpus = cpu_policy.guest_cpus(spec)
    nodes = _node_count(spec, cpus)
    if nodes is None:
        return None
    flavor = spec.flavor
    if nodes > flavor.vcpus:
        raise _invalid('hw:numa_nodes', '%d cells for %d vCPUs' %
                       (nodes, flavor.vcpus))
    cells = _split(flavor.get('extra_specs') or {}, nodes, flavor.vcpus,
                   flavor.memory_mb)
    # as nova, the emulator threads' pCPU goes with the first guest cell
    return [numa_cells.GuestCell(
        frozenset(vcpus - cpus.dedicated), frozenset(vcpus & cpus.dedicated),
        memory_mb, cpus.thread_policy, cpus.page_size,
        cpus.emulator_pcpus if index == 0 else 0)
        for index, (vcpus, memory_mb) in enumerate(cells)]


def _assign(guest, cells, fits, done, used=()):
    """True if guest cells fit distinct host cells (backtracking) and
    ``done(chosen host cells)`` accepts the assignment."""
    if not guest:
        return done(used)
    for cell in cells:
        if cell not in used and fits(guest[0], cell) and \
                _assign(guest[1:], cells, fits, done, used + (cell,)):
            return True
    return False


class NUMATopologyFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.aliases = pci.parse_aliases(conf.pci.alias)

    @staticmethod
    def _guest(request):
        return request.derived('numa_topology.guest',
                               lambda: guest_topology(request.spec))

    @classmethod
    def _biggest_first(cls, request):
        return request.derived('numa_topology.biggest_first', lambda: sorted(
            cls._guest(request), key=lambda c: (
                len(c.shared) + len(c.dedicated), c.memory_mb),
            reverse=True))

    def applies_to(self, request):
        return self._guest(request) is not None

    def check_request(self, request):
        self._guest(request)

    def precheck(self, table, request, rows):
        # each guest cell needs a host cell of its own, and the devices
        # of its PCI requests must be there
        possible = numa_cells.cell_count(table)[rows] >= len(
            self._guest(request))
        pci_requests = pci.requests_of(request, self.aliases)
        if pci_requests:
            possible &= (pci.free_devices(table)[rows]
                         >= pci.devices_wanted(pci_requests))
        return possible

    def host_passes(self, host, request):
        cells = numa_cells.cells_of(host)
        if cells is None:
            return False
        limits = numa_cells.Limits(host.allocation_ratio(rcs.VCPU) or 1.0,
                                   host.allocation_ratio(rcs.MEMORY_MB)
                                   or 1.0)
        pci_requests = pci.requests_of(request, self.aliases)
        pools = pci.pools_of(host) if pci_requests else ()
        sockets = {cell.id: cell.socket for cell in cells}

        def devices_near(chosen):
            return not pci_requests or pci.can_satisfy(
                pools, pci_requests, ({c.id for c in chosen}, sockets))

        return _assign(self._biggest_first(request), cells,
                       lambda want, cell: numa_cells.fits(want, cell,
                                                          limits),
                       devices_near)
