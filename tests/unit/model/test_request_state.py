"""RequestState: what the pipeline derives from a RequestSpec, once."""

from scheduler import objects
from scheduler.model import request_state

from .. import fakes


def test_from_spec_collects_constraints():
    state = fakes.request_state(
        vcpus=2, memory_mb=1024, availability_zone='az1',
        force_hosts=['h1'], force_nodes=['n1'], ignore_hosts=['h2'],
        retry=objects.SchedulerRetries(num_attempts=2,
                                       hosts=[['h3', 'n3'], ['h4', 'n4']]),
        requested_destination=objects.Destination(host='h1'))
    assert state.resources == {'VCPU': 2, 'MEMORY_MB': 1024}
    assert state.availability_zone == 'az1'
    assert (state.force_hosts, state.force_nodes, state.ignore_hosts) == (
        ('h1',), ('n1',), ('h2',))
    assert state.tried == frozenset({('h3', 'n3'), ('h4', 'n4')})
    assert state.requested_destination.host == 'h1'
    assert state.now == fakes.NOW_TS


def test_unset_constraints_are_empty():
    spec = objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=1))
    state = request_state.RequestState.from_spec(spec, is_admin=True)
    assert (state.force_hosts, state.ignore_hosts, state.tried) == (
        (), (), frozenset())
    assert state.availability_zone is None and state.is_admin
    assert state.now > 0


def test_derived_values_are_computed_once():
    state = fakes.request_state()
    calls = []

    def compute():
        calls.append(1)
        return 'parsed'

    assert state.derived('key', compute) == 'parsed'
    assert state.derived('key', compute) == 'parsed'
    assert calls == [1]


def test_each_request_starts_with_nothing_preloaded():
    first, second = fakes.request_state(), fakes.request_state()
    first.preloaded['SomeFilter'] = {'h1'}
    assert second.preloaded == {} and second.group is None


def test_the_driver_plans_with_the_state_the_checks_built():
    spec = objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=1))
    checked = request_state.RequestState.from_spec(spec)
    parsed = []
    checked.derived('hint', lambda: parsed.append(1) or 'parsed')
    planned = request_state.RequestState.for_planning(spec, is_admin=True,
                                                      checked=checked)
    assert planned is checked and planned.is_admin
    assert planned.derived('hint', lambda: parsed.append(2)) == 'parsed'
    assert parsed == [1]
    # without the edge's: a state of its own, nothing left on the spec
    again = request_state.RequestState.for_planning(spec)
    assert again is not checked and not again.is_admin
    assert again.derived('hint', lambda: 'fresh') == 'fresh'
    assert not [name for name in vars(spec) if 'state' in name]
