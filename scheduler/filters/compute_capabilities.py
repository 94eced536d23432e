"""ComputeCapabilitiesFilter: flavor extra specs against host capabilities.

Each flavor extra spec whose key is ``capabilities:<name>[:<sub>...]`` is a
requirement (see ``extra_specs_ops``) on the host value found by following
the names, as nova's filter follows them: the first one is an attribute of
nova's HostState (``free_ram_mb``, ``vcpus_total``, ``hypervisor_type``,
``cpu_info``, ``stats``..., see ``host_values.STATE_ATTRIBUTES``) or,
failing that, a key of the tracker's ``stats``; each further one is a key
inside that value (a dict, or JSON text such as ``cpu_info``). A host
lacking the value fails. Tracker fields that are not HostState attributes
(``vcpus``, ``memory_mb``, ``running_vms``) are not found, as in nova:
write ``capabilities:vcpus_total``.

A key without any ``namespace:`` prefix is checked the same way, but only
if it names a HostState attribute or a stat the host reports; otherwise it
is ignored. Keys in any other namespace (``hw:``, ``pci_passthrough:``...)
belong to other filters and are ignored, except ``hw:maxphysaddr_bits``:
as in nova, the host's ``cpu_info`` must report ``maxphysaddr`` ``bits``
at least as large.

Example: ``capabilities:cpu_info:arch = x86_64`` or
``capabilities:hypervisor_version = >= 6000000``.
"""


from scheduler.filters import base
from scheduler.host_state import host_values
from scheduler.filters import extra_specs_ops

_SCOPE = 'capabilities'


_MAXPHYSADDR_BITS = 'hw:maxphysaddr_bits'


def _requirements(request):
    """[(path, requirement, only_if_reported)] of the flavor's specs."""
    wanted = []
    extra_specs = request.spec.flavor.get('extra_specs') or {}
    for key, text in sorted(extra_specs.items()):
        path = key.split(':')
        if len(path) == 1:
            wanted.append((path, extra_specs_ops.parse(text), True))
        elif path[0] == _SCOPE and all(path[1:]):
            wanted.append((path[1:], extra_specs_ops.parse(text), False))
        elif key == _MAXPHYSADDR_BITS:
            wanted.append((['cpu_info', 'maxphysaddr', 'bits'],
                           extra_specs_ops.parse('>= %s' % text), False))
    return wanted


def _stats(host):
    return host.attributes.get('stats') or {}


def _lookup(host, path):
    """The host value at ``path``, or None."""
    value = None
    if path[0] in host_values.STATE_ATTRIBUTES:
        value = host_values.state_attribute(host, path[0])
    if value is None:
        value = _stats(host).get(path[0])
    return host_values.descend(value, path[1:])


def _reported(host, name):
    return name in host_values.STATE_ATTRIBUTES or name in _stats(host)


class ComputeCapabilitiesFilter(base.BaseFilter):

    def applies_to(self, request):
        return bool(self._requirements(request))

    @staticmethod
    def _requirements(request):
        return request.derived('compute_capabilities.requirements',
                               lambda: _requirements(request))

    def host_passes(self, host, request):
        for path, requirement, only_if_reported in \
                self._requirements(request):
            if only_if_reported and not _reported(host, path[0]):
                continue
            value = _lookup(host, path)
            if value is None or not requirement.matches(str(value)):
                return False
        return True
