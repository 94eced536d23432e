"""Standard resource classes and how a request translates into them.

``request_resources(spec)`` is what one instance of a RequestSpec claims,
as nova asks placement for it:

* ``VCPU`` for shared vCPUs and ``PCPU`` for dedicated ones: a flavor (or
  image) with ``hw:cpu_policy=dedicated`` asks for PCPU instead of VCPU,
  ``mixed`` for PCPU for the vCPUs of ``hw:cpu_dedicated_mask`` and VCPU
  for the rest, and ``hw:emulator_threads_policy=isolate`` for one more
  PCPU (``scheduler.model.cpu_policy``);
* ``MEMORY_MB``;
* ``DISK_GB``: root + ephemeral + swap (swap is in MiB, rounded up to GiB);
  a request that boots from volume (``is_bfv``) has no root disk here.

A flavor's extra specs ``resources:<CLASS>=<N>`` (nova's syntax for its
unnumbered request group) set the amount of ``CLASS``: another class is
added (``resources:CUSTOM_FPGA=1``), a standard one replaced
(``resources:VCPU=0`` asks for none); numbered groups (``resources1:``)
are not read here. A class name or amount that is not one is an
``InvalidField`` naming the extra spec.

A tracker's PCPU inventory is the host CPUs its NUMA cells set aside for
pinning (``pcpus``; nova's ``cpu_dedicated_set``), see
``scheduler.db.providers.inventories_from_node``. Zero amounts are left
out.
"""

import json

from scheduler import exception
from scheduler.model import cpu_policy
from scheduler.model import generic_inventory

VCPU = 'VCPU'
PCPU = 'PCPU'
MEMORY_MB = 'MEMORY_MB'
DISK_GB = 'DISK_GB'
STANDARD = (VCPU, MEMORY_MB, DISK_GB)
#: nova's flavor extra spec of its unnumbered group's resources
EXTRA_SPEC_PREFIX = 'resources:'


def flavor_resources(flavor, is_bfv=False, dedicated_vcpus=0,
                     emulator_pcpus=0):
    """Amount of each class one instance of ``flavor`` needs."""
    swap_gb = (flavor.get('swap', 0) + 1023) // 1024
    root_gb = 0 if is_bfv else flavor.get('root_gb', 0)
    amounts = {
        VCPU: flavor.vcpus - dedicated_vcpus,
        PCPU: dedicated_vcpus + emulator_pcpus,
        MEMORY_MB: flavor.memory_mb,
        DISK_GB: root_gb + flavor.get('ephemeral_gb', 0) + swap_gb,
    }
    return {rc: amount for rc, amount in amounts.items() if amount > 0}


def request_resources(spec):
    """Amount of each class one instance of RequestSpec ``spec`` needs."""
    cpus = cpu_policy.guest_cpus(spec)
    amounts = flavor_resources(spec.flavor, bool(spec.get('is_bfv')),
                               len(cpus.dedicated), cpus.emulator_pcpus)
    amounts.update(extra_spec_resources(spec.flavor))
    return {rc: amount for rc, amount in amounts.items() if amount > 0}


def extra_spec_resources(flavor):
    """Class -> amount of the flavor's ``resources:<CLASS>`` extra specs
    (module docstring), zero amounts included."""
    amounts = {}
    for key, value in (flavor.get('extra_specs') or {}).items():
        if not key.startswith(EXTRA_SPEC_PREFIX):
            continue
        path = 'flavor.extra_specs.' + key
        name = generic_inventory.check_resource_class(
            key[len(EXTRA_SPEC_PREFIX):], path)
        try:
            amount = int(value)
        except (TypeError, ValueError):
            amount = -1
        if amount < 0:
            raise exception.InvalidField(
                field=path, reason='expected an amount of 0 or more, got %r'
                % (value,))
        amounts[name] = amount
    return amounts


def dedicated_cpus(numa_topology):
    """(PCPU total, PCPU used) of a tracker's ``numa_topology`` JSON: its
    cells' ``pcpus`` and how many of them are pinned; (0, 0) without."""
    try:
        cells = json.loads(numa_topology or 'null')['cells']
        pcpus = [set(cell.get('pcpus') or ()) for cell in cells]
        pinned = [set(cell.get('pinned_cpus') or ()) for cell in cells]
    except (TypeError, ValueError, KeyError, AttributeError):
        return 0, 0
    return (sum(len(p) for p in pcpus),
            sum(len(p & q) for p, q in zip(pcpus, pinned)))
