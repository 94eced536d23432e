"""A fake Placement behind keystoneauth1's ``Adapter.get`` interface, and a
fake scheduler client that records what the feed pushed.

``FakePlacement`` holds providers as Placement does, bumps a provider's
generation on every change (as Placement does), and answers the five GETs
the feed's reader makes; ``urls`` lists every request.
"""

import uuid as uuid_mod


class FakeResponse:

    def __init__(self, status_code, body=None):
        self.status_code = status_code
        self._body = body
        self.text = '' if body is None else str(body)

    def json(self):
        return self._body


class FakePlacement:

    def __init__(self):
        self.providers = {}
        self.urls = []

    def add(self, name, parent=None, inventories=None, usages=None,
            traits=(), aggregates=()):
        uuid = str(uuid_mod.uuid5(uuid_mod.NAMESPACE_URL, name))
        root = self.providers[parent]['root'] if parent else uuid
        self.providers[uuid] = {
            'uuid': uuid, 'name': name, 'generation': 1, 'parent': parent,
            'root': root, 'inventories': dict(inventories or {}),
            'usages': dict(usages or {}), 'traits': list(traits),
            'aggregates': list(aggregates)}
        return uuid

    def change(self, uuid, **values):
        provider = self.providers[uuid]
        provider.update(values)
        provider['generation'] += 1

    def get(self, url, microversion=None, raise_exc=True):
        self.urls.append(url)
        parts = url.strip('/').split('/')
        if parts == ['resource_providers']:
            return FakeResponse(200, {'resource_providers': [
                {'uuid': rp['uuid'], 'name': rp['name'],
                 'generation': rp['generation'],
                 'parent_provider_uuid': rp['parent'],
                 'root_provider_uuid': rp['root']}
                for rp in self.providers.values()]})
        provider = self.providers.get(parts[1])
        if provider is None:
            return FakeResponse(404, {'errors': []})
        return FakeResponse(200, {
            'resource_provider_generation': provider['generation'],
            parts[2]: provider[parts[2]]})


def inventory(total, reserved=0, ratio=1.0, max_unit=None, step_size=1):
    return {'total': total, 'reserved': reserved, 'min_unit': 1,
            'max_unit': total if max_unit is None else max_unit,
            'step_size': step_size, 'allocation_ratio': ratio}


class RecordingClient:
    """Stands for ``SchedulerClient``: records the casts."""

    def __init__(self):
        self.reports = []
        self.aggregates = []
        self.deleted_aggregates = []

    def update_resource_stats(self, ctxt, name, stats):
        self.reports.append((name, stats))

    def update_aggregates(self, ctxt, aggregates):
        self.aggregates.extend(aggregates)

    def delete_aggregate(self, ctxt, aggregate):
        self.deleted_aggregates.append(aggregate)
