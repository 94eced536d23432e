"""What the feed reads from Placement, and how many requests it costs.

``PlacementReader(http)`` wraps anything with keystoneauth1's
``Adapter.get(url, microversion=..., raise_exc=False)`` (a real adapter
from ``adapter_from_conf``, or a fake in tests) and counts every request
in ``requests``:

* ``list_providers()``: one ``GET /resource_providers``, every provider's
  ``Listed(uuid, name, generation, parent_uuid, root_uuid)``;
* ``read_provider(listed)``: four requests (inventories, usages, traits,
  aggregates), a ``Provider`` with the listed generation; a provider
  deleted since the listing raises ``ProviderGone``;
* ``read_usages(uuid)``: one request, the provider's usages.

The count is kept under a lock: the feed may read several providers at
once from threads (``[placement_feed] read_concurrency``), which the
adapter's session allows. Any other answer than 200 raises
``PlacementError`` with the status and the URL; connection failures are
keystoneauth1's own exceptions. All requests use ``MICROVERSION``: 1.14
added parent and root UUIDs to the listing, 1.19 the generation to the
aggregates answer.

>>> reader = PlacementReader(adapter_from_conf(conf))   # doctest: +SKIP
>>> [listed.name for listed in reader.list_providers()]  # doctest: +SKIP
['compute-01', 'compute-01_0000:81:00.0']
"""

import dataclasses
import threading

from keystoneauth1 import loading as ks_loading

from scheduler.conf import placement_feed as feed_conf

MICROVERSION = '1.19'


class PlacementError(Exception):
    """Placement answered something else than 200."""

    def __init__(self, url, status, text=''):
        super().__init__('GET %s: HTTP %s %s' % (url, status, text[:200]))
        self.status = status


class ProviderGone(PlacementError):
    """The provider was deleted after the listing named it."""


@dataclasses.dataclass(frozen=True)
class Listed:
    """One provider of the listing."""
    uuid: str
    name: str
    generation: int
    parent_uuid: str | None
    root_uuid: str


@dataclasses.dataclass(frozen=True)
class Provider:
    """Everything the feed reads of one provider."""
    listed: Listed
    inventories: dict
    usages: dict
    traits: tuple
    aggregates: tuple


def adapter_from_conf(conf):
    """A keystoneauth1 adapter on Placement from ``[placement_feed]``."""
    group = feed_conf.GROUP
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth)
    return ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth)


class PlacementReader:

    def __init__(self, http):
        self.http = http
        self.requests = 0
        self._count_lock = threading.Lock()

    def _get(self, url):
        with self._count_lock:
            self.requests += 1
        response = self.http.get(url, microversion=MICROVERSION,
                                 raise_exc=False)
        if response.status_code == 404:
            raise ProviderGone(url, 404)
        if response.status_code != 200:
            raise PlacementError(url, response.status_code,
                                 getattr(response, 'text', ''))
        return response.json()

    def list_providers(self):
        """Every provider, from one request."""
        return [Listed(uuid=rp['uuid'], name=rp['name'],
                       generation=rp['generation'],
                       parent_uuid=rp.get('parent_provider_uuid'),
                       root_uuid=rp.get('root_provider_uuid') or rp['uuid'])
                for rp in self._get('/resource_providers')
                ['resource_providers']]

    def read_usages(self, uuid):
        """One provider's usages, from one request (the usage sweep:
        Placement moves no generation when allocations are deleted)."""
        return self._get('/resource_providers/%s/usages' % uuid)['usages']

    def read_provider(self, listed):
        """The four reads of one provider (module docstring)."""
        base = '/resource_providers/%s' % listed.uuid
        return Provider(
            listed=listed,
            inventories=self._get(base + '/inventories')['inventories'],
            usages=self._get(base + '/usages')['usages'],
            traits=tuple(sorted(self._get(base + '/traits')['traits'])),
            aggregates=tuple(sorted(
                self._get(base + '/aggregates')['aggregates'])))
