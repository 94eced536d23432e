"""The requested-hosts step: force_hosts, force_nodes, ignore_hosts,
requested_destination and hosts already tried, before any filter runs."""

import pytest

from scheduler import objects
from scheduler.driver import requested_hosts

from .. import fakes


@pytest.fixture
def table():
    # two hosts with two nodes each, one single-node host
    return fakes.host_table(
        fakes.provider(1, 'h1', 'h1-n1'),
        fakes.provider(2, 'h1', 'h1-n2'),
        fakes.provider(3, 'h2', 'h2-n1'),
        fakes.provider(4, 'h2', 'h2-n2'),
        fakes.provider(5, 'h3'))


def _dest(host, node=None):
    return objects.Destination(host=host, node=node)


def _retry(*pairs):
    return objects.SchedulerRetries(num_attempts=len(pairs),
                                    hosts=[list(p) for p in pairs])


CASES = [
    ('nothing-asked', {}, ['h1-n1', 'h1-n2', 'h2-n1', 'h2-n2', 'h3']),
    ('force-host', {'force_hosts': ['h2']}, ['h2-n1', 'h2-n2']),
    ('force-two-hosts', {'force_hosts': ['h3', 'h1']},
     ['h1-n1', 'h1-n2', 'h3']),
    ('force-unknown-host', {'force_hosts': ['nope']}, []),
    ('force-node', {'force_nodes': ['h2-n2']}, ['h2-n2']),
    ('force-host-and-node', {'force_hosts': ['h1'],
                             'force_nodes': ['h1-n2', 'h2-n1']}, ['h1-n2']),
    ('ignore-host', {'ignore_hosts': ['h1', 'h3']}, ['h2-n1', 'h2-n2']),
    ('ignore-beats-force', {'force_hosts': ['h1', 'h2'],
                            'ignore_hosts': ['h1']}, ['h2-n1', 'h2-n2']),
    ('destination-host', {'requested_destination': _dest('h1')},
     ['h1-n1', 'h1-n2']),
    ('destination-node', {'requested_destination': _dest('h1', 'h1-n2')},
     ['h1-n2']),
    ('destination-unknown', {'requested_destination': _dest('h9')}, []),
    ('retry-excludes-tried-node', {'retry': _retry(('h1', 'h1-n1'))},
     ['h1-n2', 'h2-n1', 'h2-n2', 'h3']),
    ('retry-several', {'retry': _retry(('h1', 'h1-n1'), ('h3', 'h3'))},
     ['h1-n2', 'h2-n1', 'h2-n2']),
    ('retry-and-destination', {'requested_destination': _dest('h2'),
                               'retry': _retry(('h2', 'h2-n1'))},
     ['h2-n2']),
]


@pytest.mark.parametrize('spec_fields, expected', [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_allowed_nodes(table, spec_fields, expected):
    request = fakes.request_state(**spec_fields)
    mask = requested_hosts.requested_hosts_mask(table, request)
    assert len(mask) == table.size
    assert [n for n, ok in zip(table.nodenames, mask) if ok] == expected
