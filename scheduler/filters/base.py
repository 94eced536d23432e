"""The filter contract.

* Vectorized filters override ``filter_all(table, request)`` and return a
  boolean numpy mask of length ``table.size``; they never loop over hosts
  in Python.
* Per-host filters override ``host_passes(host, request)``; the driver
  calls it only on hosts that survived every vectorized filter.

Any filter may override ``applies_to(request)`` to return False when the
request asks nothing of it (no hint, no extra spec, no zone): every host
then passes without a ``host_passes`` or ``filter_all`` call (the driver
does not run it; ``mask_for`` returns all True).

A per-host filter may also override ``precheck(table, request, rows)``: a
boolean numpy mask over ``rows`` that is False only where ``host_passes``
would be False too (a necessary condition read from numpy columns, e.g.
"has enough NUMA cells"); ``host_passes`` then runs only where it is
True. It changes how fast a filter decides, never what it decides.

``explain(table, request, removed_rows)`` may return a short detail for
NoValidHost diagnoses (e.g. which resource class was short).

A filter that removes exactly the hosts where the request's resources do
not fit (the rule of ``scheduler.model.fit``) sets ``applies_fit_rule``:
the driver then does not apply the rule again to the first instance.

A filter whose verdict can change with the instance's image alone, its
resources and neighbours unchanged, sets ``judges_image``: a check of an
instance in place (nova's rebuild with a new image,
``FilterScheduler.check_destination``) runs only those filters.

Stored data (the preload hook). A filter never touches the database in
``filter_all`` or ``host_passes``. One that needs stored data for a
request (the hosts of the instances a hint names ...) overrides
``preload(request, store)``: the driver calls it once per planning
attempt, before any filter runs, with ``store`` a read-only
``scheduler.driver.plugins.StoredData``; what it returns (None: nothing)
is kept in the request state under the filter's name, and the filter
reads it back with ``self.preloaded(request)``::

    class NearInstanceFilter(BaseFilter):

        def preload(self, request, store):
            if 'near' in request.hints:
                return store.instance_hosts(request.hints['near'])

        def applies_to(self, request):
            return self.preloaded(request) is not None

        def host_passes(self, host, request):
            return host.host in self.preloaded(request)

The driver calls the hook of every enabled filter and weigher
(``scheduler.weighers.base`` has the same one) and names none of them.
Values of the ``same_host`` and ``different_host`` hints were checked at
the RPC edge; other hints reach the hook as any list of strings. The
hook's time is the decision's ``preload`` phase. The request's server
group is not a plugin's: the driver loads it itself (``request.group``).
doc/source/filters.rst has a runnable example.
"""

import numpy as np


class BaseFilter:

    #: True if the filter is the fit rule itself (see the module docstring)
    applies_fit_rule = False

    #: True if the filter judges the instance's image (module docstring)
    judges_image = False

    def __init__(self, conf):
        self.conf = conf

    @property
    def name(self):
        return type(self).__name__

    @property
    def vectorized(self):
        return type(self).filter_all is not BaseFilter.filter_all

    def filter_all(self, table, request):
        raise NotImplementedError

    def host_passes(self, host, request):
        raise NotImplementedError

    def applies_to(self, request):
        return True

    def check_request(self, request):
        """Raise ``InvalidField`` naming the field when this filter cannot
        read what ``request`` asks of it (a hint or an extra spec it
        owns). Run once per request at the RPC edge, before planning
        (``scheduler.driver.plugins.RequestChecks``), so filtering never
        meets input it refuses. Default: nothing to check."""

    def preload(self, request, store):
        """What this filter needs from stored data for ``request``, read
        through ``store`` (see the module docstring); None: nothing."""
        return None

    def preloaded(self, request):
        """What ``preload`` returned for ``request`` (None: nothing)."""
        return request.preloaded.get(self.name)

    def mask_for(self, table, request, alive_rows):
        """Mask over all rows; per-host filters only visit ``alive_rows``."""
        if not self.applies_to(request):
            return np.ones(table.size, dtype=bool)
        if self.vectorized:
            return self.filter_all(table, request)
        mask = np.zeros(table.size, dtype=bool)
        rows = np.asarray(alive_rows, dtype=np.intp)
        possible = self.precheck(table, request, rows)
        if possible is not None:
            rows = rows[possible]
        for row in rows.tolist():
            mask[row] = bool(self.host_passes(table.view(row), request))
        return mask

    def precheck(self, table, request, rows):
        """Mask over ``rows`` of the hosts that may pass, or None (all
        may); see the module docstring."""
        return None

    def explain(self, table, request, removed_rows):
        return None
