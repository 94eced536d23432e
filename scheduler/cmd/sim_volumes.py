"""Boot from volume in ``scheduler-sim``: storage backends in racks.

The simulated cloud's compute hosts stand in ``--racks`` racks, each rack
with one storage backend (a provider of kind ``storage`` reporting
``DISK_GB``, ``STORAGE_DISK_SSD`` and its rack through a generic tracker
report). After the flavor run, conductors place ``--bfv-instances``
boot-from-volume instances: each request has two resource groups, the
instance (``compute``, its flavor without a root disk) and its volume
(``storage``), claimed together. Half the requests carry a soft locality
rule "compute in the same rack as the volume", half carry none; the
summary prints how many instances of each half landed in the same rack
as their volume (without the rule, about one in ``--racks`` by chance).
"""

import threading
import time

from scheduler import exception
from scheduler import objects

VOLUME_GB = 50
BACKEND_GB = 100000


def add_arguments(parser):
    parser.add_argument('--racks', type=int, default=8,
                        help='racks of compute hosts, one storage backend '
                        'each')
    parser.add_argument('--bfv-instances', type=int, default=200,
                        help='boot-from-volume instances placed after the '
                        'flavor run (0: none)')


def rack_of(index, racks):
    return 'rack%02d' % (index % racks)


def backend_reports(racks):
    """(name, generic report) of each rack's storage backend."""
    return [('storage-%s' % rack_of(i, racks), {
        'kind': 'storage',
        'inventories': {'DISK_GB': {'total': BACKEND_GB}},
        'traits': ['STORAGE_DISK_SSD'],
        'locality': {'rack': rack_of(i, racks)}}) for i in range(racks)]


def _spec(flavor, with_rule):
    compute = {'VCPU': flavor['vcpus'], 'MEMORY_MB': flavor['memory_mb']}
    spec = objects.RequestSpec(
        num_instances=1, project_id='demo', is_bfv=True,
        flavor=objects.Flavor(**flavor),
        resource_groups=[
            objects.ResourceGroup(name='compute', kind='compute',
                                  resources=compute),
            objects.ResourceGroup(name='volume', kind='storage',
                                  resources={'DISK_GB': VOLUME_GB},
                                  required_traits=['STORAGE_DISK_SSD'])])
    if with_rule:
        spec.locality = [objects.LocalityRule(
            groups=['compute', 'volume'], scope='rack', policy='same',
            hard=False)]
    return spec


class VolumeBoots:
    """Places the boot-from-volume requests and counts co-location."""

    def __init__(self, client, ctxt, flavor, count, rack_of_host):
        self.client = client
        self.ctxt = ctxt
        self.queue = [_spec(flavor, index % 2 == 0)
                      for index in range(count)]
        self.rack_of_host = rack_of_host
        self.lock = threading.Lock()
        self.placed = {True: [], False: []}   # with rule -> same rack?
        self.refused = 0
        self.latencies = []

    def conductor(self, boot):
        while True:
            with self.lock:
                if not self.queue:
                    return
                spec = self.queue.pop()
            with_rule = bool(spec.get('locality'))
            started = time.perf_counter()
            try:
                [[selection]] = self.client.select_destinations(
                    self.ctxt, spec)
            except exception.NoValidHost:
                with self.lock:
                    self.refused += 1
                continue
            elapsed = time.perf_counter() - started
            volume_host = selection.provider_for('volume')[0]
            same = (self.rack_of_host[selection.host]
                    == self.rack_of_host[volume_host])
            boot(selection)
            with self.lock:
                self.placed[with_rule].append(same)
                self.latencies.append(elapsed)

    def run(self, conductors, boot):
        threads = [threading.Thread(target=self.conductor, args=(boot,))
                   for _ in range(conductors)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def summary(self, racks):
        lines = ['Boot from volume: %d instances with a %d-GB volume each, '
                 '%d racks, one storage backend per rack; NoValidHost: %d'
                 % (sum(len(v) for v in self.placed.values()), VOLUME_GB,
                    racks, self.refused)]
        for with_rule, label in ((True, 'soft rule "compute in the '
                                  'volume\'s rack"'),
                                 (False, 'no locality rule')):
            same = self.placed[with_rule]
            lines.append('  %-36s %d/%d in the same rack as their volume '
                         '(%.0f%%)' % (label + ':', sum(same), len(same),
                                       100.0 * sum(same) / max(len(same),
                                                               1)))
        return lines
