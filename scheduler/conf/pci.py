"""[pci] options: the PCI aliases flavors request devices by."""

from oslo_config import cfg

GROUP = cfg.OptGroup('pci', title='PCI passthrough options')

pci_opts = [
    cfg.MultiStrOpt('alias',
                    default=[],
                    help='A PCI alias: a JSON object naming a kind of '
                         'device that flavors request with the extra spec '
                         '"pci_passthrough:alias" = "<name>:<count>[,...]". '
                         'Repeat the option for several aliases, e.g.\n\n'
                         '  alias = {"name": "fast-nic", "vendor_id": '
                         '"8086", "product_id": "154d"}\n\n'
                         'Keys: "name" (required); "vendor_id" and '
                         '"product_id" (hexadecimal, as the tracker reports '
                         'them); "device_type" ("type-PCI", "type-PF" or '
                         '"type-VF", matched against the pool\'s dev_type); '
                         '"numa_policy" ("legacy", the default, '
                         '"required", "preferred" or "socket": where the '
                         'device may be relative to the NUMA cells of a '
                         'guest with a NUMA topology; the flavor extra spec '
                         '"hw:pci_numa_affinity_policy" overrides it); any '
                         'other key is a tag the device pool must carry '
                         'with the same value. Several entries with the '
                         'same name (and the same device_type and '
                         'numa_policy) mean any of them may satisfy the '
                         'request. Invalid JSON or a missing name stops '
                         'the service at start-up. Used by '
                         'PciPassthroughFilter and NUMATopologyFilter.'),
]


def register_opts(conf):
    # A fresh group each time: register_group copies it shallowly, so
    # registering the module's GROUP would share one option table, and
    # every set_override, between all ConfigOpts of the process.
    conf.register_group(cfg.OptGroup(GROUP.name, title=GROUP.title))
    conf.register_opts(pci_opts, group=GROUP)


def list_opts():
    return {GROUP: pci_opts}
