"""AssumedClaims: a worker's tentative claims, recorded per request.

kube-scheduler's assume / forget / confirm, over the HostTable:

* ``assume(request, row, resources)`` while planning (under the cache's
  lock): the table counts the claim at once, so the next instance of the
  request and the other threads of the worker plan around it;
* ``confirm(request)`` once the claim transaction committed: the amounts
  move from ``assumed`` to ``claimed`` (the next read of the rows brings
  the database's own figure, which includes them);
* ``forget(request)`` when the claim lost (or planning failed): the amounts
  are taken back in memory; no database read is needed to undo them.

A request that finds no host while other requests of this worker hold
tentative claims would answer a NoValidHost the database might not confirm
(one of them may still lose and be forgotten): ``wait_for_others`` lets it
wait until one of them settles, then plan again.
"""

import threading


class AssumedClaims:

    def __init__(self, cache):
        self._cache = cache
        self._claims = {}
        self._settled = threading.Condition()

    def assume(self, request, row, resources):
        """Count a tentative claim (call with ``cache.lock`` held)."""
        self._cache.table.assume(row, resources)
        with self._settled:
            self._claims.setdefault(request, []).append((row, resources))

    def confirm(self, request):
        self._settle(request, self._cache.table.confirm)

    def forget(self, request):
        self._settle(request, self._cache.table.forget)

    def _settle(self, request, apply):
        with self._cache.lock, self._settled:
            for row, resources in self._claims.pop(request, ()):
                apply(row, resources)
            self._settled.notify_all()

    def pending(self, exclude=None):
        """The requests with tentative claims (but ``exclude``)."""
        with self._settled:
            return frozenset(r for r in self._claims if r is not exclude)

    def wait_for_others(self, request, timeout):
        """Wait until a request other than ``request`` that holds
        tentative claims now settles; False if there was none or none
        settled within ``timeout`` seconds."""
        with self._settled:
            others = frozenset(r for r in self._claims if r is not request)
            if not others:
                return False
            return self._settled.wait_for(
                lambda: not others <= set(self._claims), timeout)
