"""ImagePropertiesWeigher: prefer hosts running instances of similar images.

``[filter_scheduler] image_props_weight_setting`` lists ``property=ratio``
pairs (e.g. ``os_distro=1.0, hw_machine_type=0.5``). A host weighs the sum,
over those properties the request's image sets, of ratio x the number of
instances on the host whose image has the same value (instances as
trackers report them with ``update_instance_info``). With a positive
multiplier similar workloads gather; negative spreads them.
"""

import numpy as np

from scheduler import exception
from scheduler.weighers import base


def parse_setting(entries):
    """``['name=ratio', ...]`` -> ``{name: ratio}``; bad entries raise."""
    setting = {}
    for entry in entries:
        name, sep, ratio = entry.partition('=')
        try:
            if not sep or not name.strip():
                raise ValueError(entry)
            setting[name.strip()] = float(ratio)
        except ValueError:
            raise exception.PluginLoadError(
                reason='[filter_scheduler] image_props_weight_setting: '
                '%r is not "property=ratio"' % entry)
    return setting


class ImagePropertiesWeigher(base.BaseWeigher):
    multiplier_option = 'image_props_weight_multiplier'

    def __init__(self, conf):
        super().__init__(conf)
        self.setting = parse_setting(
            conf.filter_scheduler.image_props_weight_setting)

    def weigh_all(self, table, rows, request):
        image = request.spec.get('image')
        properties = image.get('properties', {}) if image else {}
        wanted = [(name, ratio, properties[name])
                  for name, ratio in self.setting.items()
                  if properties.get(name) is not None]
        if not wanted:
            return np.zeros(len(rows))
        index = table.image_properties
        return np.array([sum(ratio * index.count(table.hosts[r], name, value)
                             for name, ratio, value in wanted)
                         for r in rows], dtype=np.float64)
