"""SimpleCIDRAffinityFilter: hosts in the network of a given IP address.

Scheduler hints: ``build_near_host_ip`` (an IPv4 or IPv6 address) and
``cidr`` (a prefix such as ``/24``, the default). A host passes when its
``host_ip`` lies in ``build_near_host_ip + cidr``; a host that reports no
``host_ip`` fails. Requests without ``build_near_host_ip`` pass everywhere.
A malformed address or prefix raises ``InvalidField`` naming the hint.
"""

import ipaddress

from scheduler import exception
from scheduler.filters import base

_DEFAULT_CIDR = '/24'


def _hint(request, name):
    values = request.hints.get(name) or []
    return values[0] if values else None


def _network(request):
    """The network to build in, or None if the hint is absent."""
    address = _hint(request, 'build_near_host_ip')
    if not address:
        return None
    cidr = _hint(request, 'cidr') or _DEFAULT_CIDR
    if not cidr.startswith('/'):
        cidr = '/' + cidr
    try:
        ipaddress.ip_address(address)
    except ValueError as exc:
        raise exception.InvalidField(
            field='scheduler_hints.build_near_host_ip', reason=str(exc))
    try:
        return ipaddress.ip_network(address + cidr, strict=False)
    except ValueError as exc:
        raise exception.InvalidField(field='scheduler_hints.cidr',
                                     reason=str(exc))


class SimpleCIDRAffinityFilter(base.BaseFilter):

    @staticmethod
    def _network(request):
        return request.derived('simple_cidr_affinity.network',
                               lambda: _network(request))

    def applies_to(self, request):
        return self._network(request) is not None

    def check_request(self, request):
        self._network(request)

    def host_passes(self, host, request):
        host_ip = host.attributes.get('host_ip')
        if not host_ip:
            return False
        try:
            return ipaddress.ip_address(host_ip) in self._network(request)
        except ValueError:
            return False
