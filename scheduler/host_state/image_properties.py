"""ImagePropertyIndex: per host, how many instances carry each image
property value, for the few properties ImagePropertiesWeigher looks at.

Fed incrementally by ``scheduler.db.instances.load_instance_changes``;
with no properties configured it stays empty and costs nothing.
"""

import collections


class ImagePropertyIndex:

    def __init__(self, properties=()):
        self.properties = tuple(properties)
        self._of_instance = {}
        self._of_host = collections.defaultdict(collections.Counter)

    @property
    def enabled(self):
        return bool(self.properties)

    def apply(self, changes):
        for uuid, host, image_properties, deleted in changes:
            old = self._of_instance.pop(uuid, None)
            if old is not None:
                old_host, pairs = old
                self._of_host[old_host].subtract(pairs)
            if deleted or not host:
                continue
            pairs = [(name, str(image_properties[name]))
                     for name in self.properties
                     if image_properties.get(name) is not None]
            self._of_instance[uuid] = (host, pairs)
            self._of_host[host].update(pairs)

    def count(self, host, name, value):
        """Instances on ``host`` whose image has ``name`` = ``value``."""
        counts = self._of_host.get(host)
        return counts[(name, str(value))] if counts else 0
