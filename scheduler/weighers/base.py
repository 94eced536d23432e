"""The weigher contract: ``weigh_all(table, rows, request) -> floats``.

``weighted(table, rows, request)`` is what a weigher adds to the total:
its multiplier times its weights normalized to 0..1 (``normalize``), or
None when its weights are all equal (they would add nothing: a request
without a server group, hosts without failed builds), so the driver skips
the multiplication over every candidate. A weigher that can tell from
the request or the table alone that its weights are all equal says so in
``uniform(table, rows, request)``: ``weighted`` is then None without a
``weigh_all`` pass over the candidates (with a finite multiplier: an
infinite one still turns equal weights into NaN, as nova's does).
``weighted`` computes the same numbers as ``normalize`` (same operations
in the same order, so the same floats), reading each weight's minimum and
maximum once.

The multiplier comes from ``[filter_scheduler] <multiplier_option>``; an
aggregate whose metadata sets the same key (e.g.
``ram_weight_multiplier=-1.0``) overrides it for its hosts (the smallest
value wins when several aggregates of a host set it; as in nova, if one
of them is not a number the configured multiplier applies).

A weigher that needs stored data for a request overrides
``preload(request, store)`` and reads its answer back with
``self.preloaded(request)`` in ``weigh_all``: the same hook, called the
same way (once per planning attempt, before any filter runs, ``store`` a
read-only ``scheduler.driver.plugins.StoredData``), as a filter's; see
``scheduler.filters.base``. ``weigh_all`` itself never touches the
database.
"""

import math

import numpy as np


class BaseWeigher:

    #: name of the [filter_scheduler] option holding the multiplier
    multiplier_option = None
    #: attribute columns it reads (``HostTable.expect_columns``)
    columns = ()

    def __init__(self, conf):
        self.conf = conf
        self.multiplier = (getattr(conf.filter_scheduler,
                                   self.multiplier_option)
                           if self.multiplier_option else 1.0)

    @property
    def name(self):
        return type(self).__name__

    def weigh_all(self, table, rows, request):
        raise NotImplementedError

    def check_request(self, request):
        """As a filter's (``scheduler.filters.base``): raise
        ``InvalidField`` at the RPC edge for what this weigher cannot read
        in ``request``. Default: nothing to check."""

    def preload(self, request, store):
        """What this weigher needs from stored data for ``request``, read
        through ``store`` (``scheduler.filters.base``); None: nothing."""
        return None

    def preloaded(self, request):
        """What ``preload`` returned for ``request`` (None: nothing)."""
        return request.preloaded.get(self.name)

    def multipliers(self, table, rows):
        """The multiplier of each row: config, or aggregate override."""
        overrides = self._overrides(table, rows)
        if overrides is None:
            return np.full(len(rows), self.multiplier, dtype=np.float64)
        return _with_overrides(self.multiplier, overrides)

    def uniform(self, table, rows, request):
        """True if every row of ``rows`` is known to weigh the same
        without weighing them (module docstring); False: weigh them."""
        return False

    def weighted(self, table, rows, request):
        """Multipliers times normalized weights of ``rows``, or None when
        the weights are all equal (see the module docstring)."""
        finite = math.isfinite(self.multiplier)
        if finite and self.uniform(table, rows, request):
            return None
        raw = np.asarray(self.weigh_all(table, rows, request),
                         dtype=np.float64)
        if not len(raw):
            return None
        low, high = raw.min(), raw.max()
        if low == high and finite:
            return None
        normalized = _scaled(raw, low, high)
        overrides = self._overrides(table, rows)
        if overrides is None:
            normalized *= self.multiplier
            return normalized
        return _with_overrides(self.multiplier, overrides) * normalized

    def _overrides(self, table, rows):
        """Aggregate overrides of ``rows`` (NaN: none), or None."""
        if not self.multiplier_option:
            return None
        overrides = table.aggregates.derived(
            ('multiplier', self.multiplier_option), table.size,
            lambda: _overrides(table, self.multiplier_option))
        if overrides is None:
            return None
        return overrides[np.asarray(rows, dtype=np.intp)]


def _overrides(table, option):
    """Per row, the aggregate override of ``option`` (NaN: none); None
    when no aggregate overrides it. Computed once per aggregate change."""
    found = {}
    for agg in table.aggregates.with_metadata(option):
        for host in agg['hosts']:
            found.setdefault(host, set()).add(agg['metadata'][option])
    overrides = np.full(table.size, np.nan)
    for host, texts in found.items():
        try:
            value = min(float(t) for t in texts)
        except ValueError:
            continue  # as nova: one bad value, the configured one
        if math.isfinite(value):
            # nan or inf would poison every sum
            overrides[table.rows_of_host(host)] = value
    return overrides if not np.isnan(overrides).all() else None


def _with_overrides(multiplier, overrides):
    """Per row, the aggregate override, or ``multiplier`` (NaN: none)."""
    return np.where(np.isnan(overrides), multiplier, overrides)


def normalize(weights):
    """Scale to 0..1; all-equal weights become 0."""
    weights = np.asarray(weights, dtype=np.float64)
    if not len(weights):
        return weights
    return _scaled(weights, weights.min(), weights.max())


def _scaled(weights, low, high):
    """``normalize`` of float ``weights`` whose extremes are known: a
    new array (``weights`` may be a column of the table)."""
    if high == low:
        return np.zeros_like(weights)
    scaled = weights - low
    scaled /= high - low
    return scaled
