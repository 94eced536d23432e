"""The composition root: one set of collaborators per worker, shared."""

from scheduler import context as sched_context
from scheduler import manager as sched_manager
from scheduler.service import composition

from .. import fakes


def test_the_manager_serves_with_the_parts_it_is_given(conf, db):
    parts = composition.build(conf, db)
    assert parts.driver.recorder is parts.recorder
    assert parts.report_writer.recorder is parts.recorder
    assert parts.driver.cache is parts.host_cache
    endpoint = sched_manager.SchedulerManager(conf, parts=parts)
    ctxt = sched_context.RequestContext(project_id='p1', roles=['service'])
    endpoint.update_resource_stats(ctxt, 'h1', dict(fakes.HOST_SHAPE))
    assert endpoint.report_writer.flush(10)
    assert parts.recorder.snapshot()['reports_written'] == 1
    [[selection]] = endpoint.select_destinations(
        ctxt, fakes.request_spec(vcpus=1))
    assert selection.host == 'h1'
    snapshot = parts.recorder.snapshot()
    assert snapshot['decisions'] == 1
    assert snapshot['total']['count'] == 1
    endpoint.stop()
