"""Standard resource classes and how a flavor translates into them."""

VCPU = 'VCPU'
MEMORY_MB = 'MEMORY_MB'
DISK_GB = 'DISK_GB'
STANDARD = (VCPU, MEMORY_MB, DISK_GB)


def flavor_resources(flavor):
    """Amount of each standard class one instance of ``flavor`` needs.

    Disk is root + ephemeral + swap (swap is in MiB, rounded up to GiB),
    as nova computes it. Zero amounts are left out.
    """
    swap_gb = (flavor.get('swap', 0) + 1023) // 1024
    amounts = {
        VCPU: flavor.vcpus,
        MEMORY_MB: flavor.memory_mb,
        DISK_GB: flavor.get('root_gb', 0) + flavor.get('ephemeral_gb', 0)
        + swap_gb,
    }
    return {rc: amount for rc, amount in amounts.items() if amount > 0}
