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


def test_the_checks_state_is_taken_once_by_the_driver():
    spec = objects.RequestSpec(flavor=objects.Flavor(vcpus=1, memory_mb=1))
    checked = request_state.RequestState.checked(spec)
    parsed = []
    checked.derived('hint', lambda: parsed.append(1) or 'parsed')
    taken = request_state.RequestState.take(spec, is_admin=True)
    assert taken is checked and taken.is_admin
    assert taken.derived('hint', lambda: parsed.append(2)) == 'parsed'
    assert parsed == [1]
    # taken: a spec planned again gets a state of its own
    again = request_state.RequestState.take(spec)
    assert again is not checked and not again.is_admin
    assert again.derived('hint', lambda: 'fresh') == 'fresh'
    # never on the wire
    assert '_scheduler_checked_state' not in str(spec.obj_to_primitive())
