"""What the benchmark clusters look like and what conductors ask for.

Host shapes and flavors are nova-like. Every scenario draws from a seeded
``random.Random`` so two runs place the same requests in the same order
(whatever the scheduler answers).
"""

import random

from scheduler import objects

#: (vcpus, memory_mb, local_gb); a cluster cycles through them.
HOST_SHAPES = (
    (16, 65536, 1000),
    (32, 131072, 2000),
    (48, 262144, 4000),
    (64, 393216, 4000),
)
ZONES = ('az1', 'az2', 'az3', 'az4')

FLAVORS = {
    'm1.small': {'vcpus': 1, 'memory_mb': 2048, 'root_gb': 20},
    'm1.medium': {'vcpus': 2, 'memory_mb': 4096, 'root_gb': 40},
    'm1.large': {'vcpus': 4, 'memory_mb': 8192, 'root_gb': 80},
    'm1.xlarge': {'vcpus': 8, 'memory_mb': 16384, 'root_gb': 160},
}

#: share of requests that name an availability zone
ZONED_SHARE = 0.25


def host_name(index):
    return 'compute%06d' % index


def shape_of(index):
    return HOST_SHAPES[index % len(HOST_SHAPES)]


def zone_of(index):
    return ZONES[(index // len(HOST_SHAPES)) % len(ZONES)]




def tracker_stats(index, beat, used):
    """Host ``index``'s report number ``beat`` as nova's resource tracker
    sends it after a build or a delete: ``used`` of its capacity plus
    one or two ``m1.small`` instances, in turn, so ``vcpus_used``,
    ``memory_mb_used``, ``local_gb_used`` and ``running_vms`` move with
    every report, the first included (a bench cluster starts at ``used``
    with none); a report whose usage never moves costs the scheduler
    less than a real tracker's. ``stats.bench_beat`` carries ``beat``
    (``churn`` counts the reports absorbed by it)."""
    vcpus, memory_mb, local_gb = shape_of(index)
    small = FLAVORS['m1.small']
    running = 1 + (index + beat) % 2
    return {'vcpus': vcpus, 'memory_mb': memory_mb, 'local_gb': local_gb,
            'vcpus_used': int(vcpus * 4 * used) + running * small['vcpus'],
            'memory_mb_used': (int(memory_mb * used)
                               + running * small['memory_mb']),
            'local_gb_used': (int(local_gb * used)
                              + running * small['root_gb']),
            'running_vms': running, 'current_workload': beat % 7,
            'stats': {'bench_beat': str(beat)},
            'availability_zone': zone_of(index),
            'hypervisor_type': 'QEMU', 'hypervisor_version': 8002000}


def flavor_resources(flavor):
    """Resource classes one instance of ``flavor`` (a FLAVORS key) needs."""
    values = FLAVORS[flavor]
    return {'VCPU': values['vcpus'], 'MEMORY_MB': values['memory_mb'],
            'DISK_GB': values['root_gb']}


def legacy_spec(flavor, count=1, zone=None):
    """nova's legacy ``request_spec`` dict for ``count`` x ``flavor``."""
    spec = {'instance_type': dict(FLAVORS[flavor], name=flavor),
            'num_instances': count,
            'instance_properties': {'project_id': 'bench',
                                    'user_id': 'bench'}}
    if zone:
        spec['instance_properties']['availability_zone'] = zone
    return spec


def request_spec(flavor, count=1, zone=None):
    """The same request as a ``RequestSpec`` object."""
    return objects.RequestSpec.from_primitives(
        legacy_spec(flavor, count, zone), {})


class RequestMix:
    """A seeded stream of ``(flavor, zone)`` pairs.

    ``zoned_share`` of the requests name a zone; the rest go anywhere.
    """

    def __init__(self, seed, flavors=None, zoned_share=ZONED_SHARE):
        self.rng = random.Random(seed)
        self.flavors = list(flavors or FLAVORS)
        self.zoned_share = zoned_share

    def next(self):
        flavor = self.rng.choice(self.flavors)
        zone = (self.rng.choice(ZONES)
                if self.rng.random() < self.zoned_share else None)
        return flavor, zone


class SpecPool:
    """Pre-built RequestSpec objects, one per (flavor, count, zone).

    Conductors reuse them so that building objects does not eat the
    client's CPU; the scheduler treats every call as a new request (it
    generates instance UUIDs when none are given).
    """

    def __init__(self):
        self._specs = {}

    def get(self, flavor, count=1, zone=None):
        key = (flavor, count, zone)
        spec = self._specs.get(key)
        if spec is None:
            spec = self._specs[key] = request_spec(flavor, count, zone)
        return spec
