"""A claim nobody confirms is released after the grace period, with no
tracker calling sync_instance_info (real workers, RabbitMQ, PostgreSQL):
the fate of a claim whose caller never got its answer."""

import time

import pytest
from oslo_utils import uuidutils

from tests.functional import db_state
from tests.functional import workload

GRACE = 8


@pytest.mark.parametrize('backend', ['postgresql'])
def test_an_unconfirmed_claim_is_released_after_the_grace_period(scheduler):
    server = scheduler(workers=2, options={
        'scheduler': {'unconfirmed_claim_grace_period': GRACE}})
    workload.push_hosts(server, workload.host_reports(2))
    client = server.client()
    orphan = uuidutils.generate_uuid()
    start = time.monotonic()
    client.select_destinations(workload.context(), workload.legacy_spec(
        workload.FLAVORS[0], [orphan]), {})
    assert db_state.allocations(server.engine, orphan)
    # the sweep runs every GRACE / 4 (at least 5 s) in each worker
    db_state.wait_for(
        lambda: not db_state.allocations(server.engine, orphan),
        GRACE + 15, 'the unconfirmed claim to be released')
    assert time.monotonic() - start >= GRACE
    assert server.count_in_log('unconfirmed for %ds' % GRACE) >= 1
