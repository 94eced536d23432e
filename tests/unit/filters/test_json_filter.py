"""JsonFilter: operators, variables, and errors in the query hint."""

import json

import pytest

from scheduler import exception
from scheduler.filters import json_filter
from tests.unit.filters import hosts

HOSTS = hosts.table(
    dict(host='big', vcpus=32, memory_mb=65536, hypervisor_type='QEMU',
         running_vms=2, stats={'gpu': 'yes'},
         cpu_info=json.dumps({'arch': 'x86_64'})),
    dict(host='small', vcpus=4, memory_mb=4096, memory_mb_used=3072,
         hypervisor_type='QEMU', running_vms=9),
    dict(host='xen', vcpus=16, memory_mb=32768, hypervisor_type='xen',
         current_workload=3),
)
ALL = ['big', 'small', 'xen']

CASES = [
    ('no hint', None, ALL),
    ('empty query', [], ALL),
    ('=', ['=', '$hypervisor_type', 'QEMU'], ['big', 'small']),
    ('free RAM counts usage', ['>=', '$free_ram_mb', 2048], ['big', 'xen']),
    ('<', ['<', '$vcpus', 16], ['small']),
    ('<=', ['<=', '$vcpus', 16], ['small', 'xen']),
    ('>', ['>', '$vcpus_total', 16], ['big']),
    ('in', ['in', '$hypervisor_type', 'xen', 'hyperv'], ['xen']),
    ('and', ['and', ['>=', '$vcpus', 8], ['=', '$hypervisor_type', 'QEMU']],
     ['big']),
    ('or', ['or', ['<', '$vcpus', 8], ['=', '$hypervisor_type', 'xen']],
     ['small', 'xen']),
    ('not', ['not', ['=', '$hypervisor_type', 'QEMU']], ['xen']),
    ('not inside and',
     ['and', ['not', ['=', '$host', 'big']], ['>', '$vcpus', 1]],
     ['small', 'xen']),
    ('nova names', ['and', ['<', '$num_instances', 5],
                    ['<', '$num_io_ops', 1]], ['big']),
    ('stats', ['=', '$stats.gpu', 'yes'], ['big']),
    ('JSON text attribute', ['=', '$cpu_info.arch', 'x86_64'], ['big']),
    ('missing variable drops out', ['=', '$nope', 1], []),
    ('types never compare', ['>', '$hypervisor_type', 1], []),
]


@pytest.mark.parametrize('query, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_filter(conf, query, expected):
    plugin = json_filter.JsonFilter(conf)
    hints = None if query is None else {'query': json.dumps(query)}
    assert hosts.passing(plugin, HOSTS, hosts.request(hints=hints)) == \
        expected


ERRORS = [
    ('not JSON', '[">=", "$free_ram_mb", 1024', 'not valid JSON'),
    ('not a list', '{"op": "="}', 'expected a list'),
    ('unknown operator', '["~", "$vcpus", 1]', 'unknown operator'),
    ('nested unknown operator', '["and", ["=<", "$vcpus", 1]]',
     'unknown operator'),
    ('object argument', '["=", {"a": 1}, 1]', 'unexpected argument'),
]


@pytest.mark.parametrize('text, reason', [c[1:] for c in ERRORS],
                         ids=[c[0] for c in ERRORS])
def test_bad_query_names_the_hint(conf, text, reason):
    plugin = json_filter.JsonFilter(conf)
    with pytest.raises(exception.InvalidField) as caught:
        hosts.passing(plugin, HOSTS, hosts.request(hints={'query': text}))
    assert caught.value.kwargs['field'] == 'scheduler_hints.query'
    assert reason in str(caught.value)
    assert 'scheduler_hints.query' in str(caught.value)


def test_query_is_parsed_once_per_request(conf, monkeypatch):
    plugin = json_filter.JsonFilter(conf)
    request = hosts.request(hints={'query': '[">", "$vcpus", 1]'})
    calls = []
    real = json_filter.parse_query
    monkeypatch.setattr(json_filter, 'parse_query',
                        lambda r: calls.append(r) or real(r))
    assert hosts.passing(plugin, HOSTS, request) == ALL
    assert len(calls) == 1
