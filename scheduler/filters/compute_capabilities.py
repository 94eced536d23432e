"""ComputeCapabilitiesFilter: flavor extra specs against host capabilities.

Each flavor extra spec whose key is ``capabilities:<name>[:<sub>...]`` is a
requirement (see ``extra_specs_ops``) on the host value found by following
the names: the first one in the tracker's attributes (``cpu_info``,
``hypervisor_type``, ``vcpus``...) or, failing that, in its ``stats``;
each further one inside that value (a dict, or JSON text such as
``cpu_info``). A host lacking the value fails.

A key without any ``namespace:`` prefix is checked the same way, but only
on hosts that report it as an attribute or a stat; other hosts pass it.
Keys in any other namespace (``hw:``, ``pci_passthrough:``...) belong to
other filters and are ignored.

Example: ``capabilities:cpu_info:arch = x86_64`` or
``capabilities:hypervisor_version = >= 6000000``.
"""


from scheduler.filters import base
from scheduler.filters import host_values
from scheduler.filters import extra_specs_ops

_SCOPE = 'capabilities'


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
    return wanted


def _lookup(attributes, path):
    """The host value at ``path``, or None."""
    value = attributes.get(path[0])
    if value is None:
        value = (attributes.get('stats') or {}).get(path[0])
    return host_values.descend(value, path[1:])


def _reported(attributes, name):
    return name in attributes or name in (attributes.get('stats') or {})


class ComputeCapabilitiesFilter(base.BaseFilter):

    def applies_to(self, request):
        return bool(self._requirements(request))

    @staticmethod
    def _requirements(request):
        return request.derived('compute_capabilities.requirements',
                               lambda: _requirements(request))

    def host_passes(self, host, request):
        attributes = host.attributes
        for path, requirement, only_if_reported in \
                self._requirements(request):
            if only_if_reported and not _reported(attributes, path[0]):
                continue
            value = _lookup(attributes, path)
            if value is None or not requirement.matches(str(value)):
                return False
        return True
