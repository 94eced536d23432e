"""PciPassthroughFilter: hosts with the PCI devices the flavor asks for.

The flavor extra spec ``pci_passthrough:alias`` = ``"gpu:2, nic:1"``
requests devices by the aliases of ``[pci] alias``. A host passes when
its ``pci_device_pools`` hold, at the same time, enough devices matching
each alias (vendor, product, device type and any other tag; see
``scheduler.model.pci``). Flavors without the extra spec pass everywhere; an
unknown alias raises ``InvalidField`` for the request. NUMA affinity is
not checked here: as in nova, it only applies to guests with a NUMA
topology, and NUMATopologyFilter checks it with the cells it picks.
"""

from scheduler.model import pci
from scheduler.filters import base


class PciPassthroughFilter(base.BaseFilter):

    def __init__(self, conf):
        super().__init__(conf)
        self.aliases = pci.parse_aliases(conf.pci.alias)

    def _requests(self, request):
        return pci.requests_of(request, self.aliases)

    def applies_to(self, request):
        return bool(self._requests(request))

    def check_request(self, request):
        self._requests(request)

    def precheck(self, table, request, rows):
        wanted = pci.devices_wanted(self._requests(request))
        return pci.free_devices(table)[rows] >= wanted

    def host_passes(self, host, request):
        return pci.can_satisfy(pci.pools_of(host), self._requests(request))

    def explain(self, table, request, removed_rows):
        return 'not enough free PCI devices for %s' % ', '.join(
            '%s:%d' % (r.alias, r.count) for r in self._requests(request))
