"""A request repeated with the same instance uuids (the broker delivered a
call again after its worker died, or the caller retried) is answered with
the claims it already holds, by any worker: the same hosts, no second
set of claims, nothing planned again."""

from scheduler.db import claims
from scheduler import context as sched_context

from .. import fakes

CTXT = sched_context.RequestContext(project_id='p1', roles=['service'])
UUIDS = ['00000000-0000-4000-8000-%012d' % i for i in range(3)]


def _hosts(selections):
    return [per[0].host for per in selections]


def test_a_repeat_gets_the_hosts_it_holds(db, make_driver):
    for name in ('h1', 'h2', 'h3', 'h4'):
        fakes.report(db, name, vcpus=8)
    first = make_driver().select_destinations(
        CTXT, fakes.request_spec(vcpus=2, num_instances=3),
        instance_uuids=UUIDS)
    before = claims.list_allocations(db)
    # another worker, whose weighers would spread elsewhere now
    again = make_driver().select_destinations(
        CTXT, fakes.request_spec(vcpus=2, num_instances=3),
        instance_uuids=UUIDS)
    assert _hosts(again) == _hosts(first)
    # the same rows, only stamped anew (claims.held_claims)
    assert _rows(claims.list_allocations(db)) == _rows(before)


def _rows(allocations):
    return sorted(str({k: v for k, v in a.items() if k != 'created_at'})
                  for a in allocations)


def test_a_repeat_on_a_full_cloud_gets_the_hosts_it_holds(db, make_driver):
    fakes.report(db, 'h1', vcpus=4, cpu_allocation_ratio=1.0)
    first = make_driver().select_destinations(
        CTXT, fakes.request_spec(vcpus=2, num_instances=2),
        instance_uuids=UUIDS[:2])
    # its own claims fill the host: planned anew it would not fit
    again = make_driver().select_destinations(
        CTXT, fakes.request_spec(vcpus=2, num_instances=2),
        instance_uuids=UUIDS[:2])
    assert _hosts(again) == _hosts(first) == ['h1', 'h1']
    assert len(claims.list_allocations(db)) == 2 * 2     # VCPU, RAM


def test_a_resize_is_no_repeat(db, driver):
    for name in ('h1', 'h2'):
        fakes.report(db, name, vcpus=8)
    driver.select_destinations(CTXT, fakes.request_spec(vcpus=2),
                               instance_uuids=UUIDS[:1])
    driver.select_destinations(CTXT, fakes.request_spec(vcpus=4),
                               instance_uuids=UUIDS[:1])
    [held] = [a for a in claims.list_allocations(db)
              if a['resource_class'] == 'VCPU']
    assert held['amount'] == 4


def test_a_reschedule_away_from_the_host_held_plans_again(db, driver):
    for name in ('h1', 'h2'):
        fakes.report(db, name, vcpus=8)
    [[first]] = driver.select_destinations(
        CTXT, fakes.request_spec(vcpus=2), instance_uuids=UUIDS[:1])
    [[moved]] = driver.select_destinations(
        CTXT, fakes.request_spec(vcpus=2, ignore_hosts=[first.host]),
        instance_uuids=UUIDS[:1])
    assert moved.host != first.host
