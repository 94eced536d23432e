"""JsonFilter: hosts matching the JSON query in the ``query`` hint.

The hint is a JSON list ``[operator, arg, ...]``; an arg is a nested query,
a literal (string, number, boolean) or a ``$variable``. Operators:

* ``=``, ``<``, ``>``, ``<=``, ``>=``: the first arg compared with each of
  the others (all must hold; values of different types never compare);
* ``in``: the first arg equals one of the others;
* ``and``, ``or``: all / any of the args are true;
* ``not``: negates its arg (with several: true if any of them is false).

A variable is what nova's HostState calls it (see ``host_values``):
``$free_ram_mb`` (physical free RAM), ``$free_disk_mb``
(``min(free_disk_gb, disk_available_least)`` in MiB),
``$total_usable_ram_mb``, ``$total_usable_disk_gb``, ``$disk_mb_used``,
``$vcpus_total``, ``$vcpus_used``, ``$num_instances``, ``$num_io_ops``
(``stats['num_instances']``, ``stats['io_workload']``),
``$failed_builds``, ``$host``, ``$nodename``, ``$hypervisor_type``,
``$hypervisor_version``, ``$cpu_info``, ``$stats``... Unlike nova, where
any other name resolves to nothing, other names are the tracker's
attributes (``$vcpus``, ``$running_vms``, ``$free_disk_gb``) and
``$availability_zone``. Dotted names descend into dicts and, unlike nova
(which fails on them), JSON text: ``$stats.gpu``, ``$cpu_info.arch``. An
arg that resolves to nothing is dropped, so a comparison left with fewer
than two args is false.

Example: ``["and", [">=", "$free_ram_mb", 1024], ["=",
"$hypervisor_type", "QEMU"]]``.

Requests without the hint pass everywhere. A hint that is not valid JSON
or not a well-formed query raises ``InvalidField`` naming
``scheduler_hints.query``, once per request.
"""

import json
import operator

from scheduler import exception
from scheduler.filters import base
from scheduler.host_state import host_values

_FIELD = 'scheduler_hints.query'


def _compare(op):
    def method(args):
        if len(args) < 2:
            return False
        try:
            return all(op(args[0], other) for other in args[1:])
        except TypeError:
            return False
    return method


_OPERATORS = {
    '=': _compare(operator.eq),
    '<': _compare(operator.lt),
    '>': _compare(operator.gt),
    '<=': _compare(operator.le),
    '>=': _compare(operator.ge),
    'in': lambda args: len(args) >= 2 and args[0] in args[1:],
    'not': lambda args: bool(args) and not all(args),
    'or': any,
    'and': all,
}

_EXTRA_VALUES = {
    'availability_zone': lambda h: h.availability_zone,
}


def _invalid(reason):
    return exception.InvalidField(field=_FIELD, reason=reason)


def _check(query):
    if not isinstance(query, list):
        raise _invalid('expected a list [operator, arg, ...], got %s' %
                       json.dumps(query))
    if not query:
        return
    if query[0] not in _OPERATORS:
        raise _invalid('unknown operator %s (known: %s)' % (
            json.dumps(query[0]), ' '.join(sorted(_OPERATORS))))
    for arg in query[1:]:
        if isinstance(arg, list):
            _check(arg)
        elif isinstance(arg, dict) or arg is None:
            raise _invalid('unexpected argument %s' % json.dumps(arg))


def parse_query(request):
    """The query hint of ``request``, decoded and checked, or None."""
    values = request.hints.get('query') or []
    if not values:
        return None
    if len(values) != 1:
        raise _invalid('expected one JSON query, got %d values' %
                       len(values))
    try:
        query = json.loads(values[0])
    except ValueError as exc:
        raise _invalid('not valid JSON: %s' % exc)
    _check(query)
    return query or None


def _variable(host, name):
    path = name[1:].split('.')
    if path[0] in host_values.STATE_ATTRIBUTES:
        value = host_values.state_attribute(host, path[0])
    elif path[0] in _EXTRA_VALUES:
        value = _EXTRA_VALUES[path[0]](host)
    else:
        value = host.attributes.get(path[0])
    return host_values.descend(value, path[1:])


def _evaluate(query, host):
    args = []
    for arg in query[1:]:
        if isinstance(arg, list):
            arg = _evaluate(arg, host) if arg else True
        elif isinstance(arg, str) and arg.startswith('$'):
            arg = _variable(host, arg)
        if arg is not None:
            args.append(arg)
    return bool(_OPERATORS[query[0]](args))


class JsonFilter(base.BaseFilter):

    @staticmethod
    def _query(request):
        return request.derived('json_filter.query',
                               lambda: parse_query(request))

    def applies_to(self, request):
        return self._query(request) is not None

    def check_request(self, request):
        self._query(request)

    def host_passes(self, host, request):
        return _evaluate(self._query(request), host)
