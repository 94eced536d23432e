"""IsolatedHostsFilter: keep some images on some hosts.

Options (``[filter_scheduler]``): ``isolated_images``, ``isolated_hosts``
and ``restrict_isolated_hosts_to_isolated_images``.

* An isolated image (its ID is in ``isolated_images``) runs only on
  isolated hosts.
* With ``restrict_isolated_hosts_to_isolated_images`` (the default),
  isolated hosts run only isolated images; a request without an image
  (volume-backed) counts as not isolated.
* With no ``isolated_images`` configured, isolated hosts are closed to
  every request if the restriction is on, and the filter passes every host
  otherwise.

Vectorized: host membership is looked up once per isolated host name.
"""

import numpy as np

from scheduler.filters import base


class IsolatedHostsFilter(base.BaseFilter):

    judges_image = True

    def __init__(self, conf):
        super().__init__(conf)
        options = conf.filter_scheduler
        self.isolated_images = frozenset(options.isolated_images)
        self.isolated_hosts = frozenset(options.isolated_hosts)
        self.restrict = options.restrict_isolated_hosts_to_isolated_images

    def _isolated_mask(self, table):
        mask = np.zeros(table.size, dtype=bool)
        for host in self.isolated_hosts:
            mask[table.rows_of_host(host)] = True
        return mask

    def _image_isolated(self, request):
        image = request.spec.get('image')
        image_id = image.get('id') if image is not None else None
        return image_id is not None and image_id in self.isolated_images

    def filter_all(self, table, request):
        isolated = self._isolated_mask(table)
        if self._image_isolated(request):
            return isolated
        if self.restrict:
            return ~isolated
        return np.ones(table.size, dtype=bool)

    def explain(self, table, request, removed_rows):
        if self._image_isolated(request):
            return 'image is isolated to isolated_hosts'
        return 'isolated_hosts are reserved for isolated_images'
