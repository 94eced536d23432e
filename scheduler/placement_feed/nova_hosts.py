"""Nova's compute services: each provider's service host, and which serve.

Placement names a compute node's provider after the node (its
``hypervisor_hostname``), and knows nothing of the compute *service*
host: ``nova-compute`` on host ``compute1`` may run node ``fake-mini``,
and every ironic node's provider is named after the node's UUID. Nova's
conductor casts a build to ``Selection.service_host``, and aggregates,
server groups, ``force_hosts`` and ``ignore_hosts`` all name service
hosts, so the feed reports each tree under ``(host, node)``.

``NovaHosts(http)`` wraps anything with keystoneauth1's
``Adapter.get(url, microversion=..., raise_exc=False)`` on Nova's API
(``adapter_from_conf``: the session of ``[placement_feed]``, service
type ``compute``, ``[placement_feed] compute_endpoint_override``).
``host_of(uuid)`` reads ``GET /os-hypervisors/{uuid}`` at microversion
2.53 (where a hypervisor's id is its compute node UUID, which is its
provider's UUID) once per provider, and remembers the answer;
``arch_of(uuid)`` is the CPU architecture the same answer gives
(``cpu_info.arch``, lower case; None when unsaid), for a driver that
reports no ``HW_ARCH_*`` trait to Placement. A
provider Nova does not know (404: a sharing or network provider, or the
compute node of a deleted compute service) has no service host (None: its
report is named after the provider; ``unknown(uuid)`` says so). A 404 is
not Nova's last word: a new compute node's provider is in Placement
before its host is mapped to a cell (``nova-manage cell_v2
discover_hosts``, or the scheduler's periodic discovery), and until then
Nova's API does not find it. Such a provider is asked again
``UNKNOWN_FIRST_RETRY`` seconds later, then at doubling intervals up to
``RETRY_AFTER`` (a provider that stays unknown costs one request per
``RETRY_AFTER``); once Nova knows it, its tree is reported under its
service host and serves (``scheduler.placement_feed.feed``). An answer
that cannot be read (Nova unreachable, 403 for a user without Nova's
``os_compute_api:os-hypervisors:show`` rule) is logged once per status
and gives None for now; no provider is asked again for ``RETRY_AFTER``
seconds (a Nova that is down costs one failed request per provider per
``RETRY_AFTER``, not per cycle).

``serving()`` reads ``GET /os-services?binary=nova-compute`` (one
request) and returns the set of hosts whose compute service is enabled,
up (as Nova's service group sees it) and not forced down, as
nova-scheduler's ``ComputeFilter`` asks of each host; None when Nova did
not answer (the caller keeps what it knew). A host missing from the list
(its service deleted) does not serve.
"""

import json
import time

from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging

LOG = logging.getLogger(__name__)
MICROVERSION = '2.53'
RETRY_AFTER = 30.0
UNKNOWN_FIRST_RETRY = 2.0


def adapter_from_conf(conf, session):
    """A keystoneauth1 adapter on Nova's API, in ``[placement_feed]``'s
    ``session``; None when ``[placement_feed] resolve_compute_hosts`` is
    off."""
    group = conf.placement_feed
    if not group.resolve_compute_hosts:
        return None
    return ks_loading.load_adapter_from_conf_options(
        conf, 'placement_feed', session=session, service_type='compute',
        endpoint_override=group.compute_endpoint_override or None)


class NovaHosts:

    def __init__(self, http, clock=time.monotonic):
        self.http = http
        self.clock = clock
        self.requests = 0
        self._hosts = {}      # provider uuid -> service host or None
        self._archs = {}      # provider uuid -> cpu_info's arch
        # provider uuid -> (when to ask again, the wait after that) for
        # the providers Nova answered 404 for
        self._ask_again = {}
        self._logged = set()  # statuses already logged
        self._failed_at = None

    def host_of(self, uuid):
        """The service host of provider ``uuid`` (module docstring)."""
        if uuid in self._hosts:
            again = self._ask_again.get(uuid)
            if again is None or self.clock() < again[0]:
                return self._hosts[uuid]
        if self._failed_at is not None and \
                self.clock() - self._failed_at < RETRY_AFTER:
            return None
        self.requests += 1
        try:
            response = self.http.get('/os-hypervisors/%s' % uuid,
                                     microversion=MICROVERSION,
                                     raise_exc=False)
        except ks_exceptions.ClientException as exc:
            return self._failed(type(exc).__name__, exc)
        if response.status_code == 404:
            wait = self._ask_again.get(uuid, (None, UNKNOWN_FIRST_RETRY))[1]
            self._ask_again[uuid] = (self.clock() + wait,
                                     min(2 * wait, RETRY_AFTER))
            self._hosts[uuid] = None
            return None
        if response.status_code != 200:
            return self._failed(response.status_code,
                                getattr(response, 'text', '')[:200])
        hypervisor = response.json()['hypervisor']
        host = hypervisor['service']['host']
        self._ask_again.pop(uuid, None)
        self._hosts[uuid] = host
        self._archs[uuid] = _arch(hypervisor.get('cpu_info'))
        return host

    def arch_of(self, uuid):
        """The CPU architecture of provider ``uuid``'s compute node as
        Nova shows it, once ``host_of(uuid)`` read it; else None."""
        return self._archs.get(uuid)

    def unknown(self, uuid):
        """Did Nova say it has no compute node ``uuid`` (404)?"""
        return uuid in self._hosts and self._hosts[uuid] is None

    def serving(self):
        """The hosts whose compute service serves (module docstring)."""
        self.requests += 1
        try:
            response = self.http.get('/os-services?binary=nova-compute',
                                     microversion=MICROVERSION,
                                     raise_exc=False)
        except ks_exceptions.ClientException as exc:
            self._log_once(type(exc).__name__, exc)
            return None
        if response.status_code != 200:
            self._log_once(response.status_code,
                           getattr(response, 'text', '')[:200])
            return None
        return {service['host'] for service in response.json()['services']
                if service.get('status') == 'enabled' and
                service.get('state') == 'up' and
                not service.get('forced_down')}

    def _failed(self, status, detail):
        self._failed_at = self.clock()
        self._log_once(status, detail)
        return None

    def _log_once(self, status, detail):
        if status not in self._logged:
            self._logged.add(status)
            LOG.warning('Nova\'s API did not answer the feed (%s: %s): '
                        'reports are named after their provider and its '
                        'services\' states are not read until it does',
                        status, detail)


def _arch(cpu_info):
    """``cpu_info['arch']`` in lower case: a dict from microversion 2.28,
    a JSON string before; None for anything else (an ironic node's
    ``cpu_info`` is free text)."""
    if isinstance(cpu_info, str):
        try:
            cpu_info = json.loads(cpu_info)
        except ValueError:
            return None
    arch = cpu_info.get('arch') if isinstance(cpu_info, dict) else None
    return arch.lower() if isinstance(arch, str) and arch else None
